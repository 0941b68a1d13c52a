// Whether the other end of a connected socket has gone: what the server asks of a connection that
// nothing reads while a deferred answer (a lease long-poll) waits.
#pragma once

namespace gauntlet::net {

// True if the peer of connected socket `fd` has closed its end or reset it: a non-blocking peek
// finds the end of the stream or an error. False while it is there, and while bytes it sent wait
// unread (a pipelined request: the client is there). Reads nothing off the socket; thread-safe.
bool PeerClosed(int fd);

}  // namespace gauntlet::net
