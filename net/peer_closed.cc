#include "net/peer_closed.h"

#include <sys/socket.h>

#include <cerrno>

namespace gauntlet::net {

bool PeerClosed(int fd) {
  char b;
  const ssize_t n = ::recv(fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
  return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

}  // namespace gauntlet::net
