// net::PeerClosed on a real socket pair: what the server's long-poll watch decides by.
#include "net/peer_closed.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

namespace gauntlet::http {
namespace {

TEST(PeerClosed, SeesTheEndOfTheStreamButNotAPeerThatIsThere) {
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  EXPECT_FALSE(net::PeerClosed(fds[0])) << "an idle peer is there";
  ASSERT_EQ(write(fds[1], "x", 1), 1);
  EXPECT_FALSE(net::PeerClosed(fds[0])) << "bytes waiting: a pipelined request, the client is there";
  char b;
  ASSERT_EQ(read(fds[0], &b, 1), 1) << "the peek left the byte";
  close(fds[1]);
  EXPECT_TRUE(net::PeerClosed(fds[0])) << "its end closed";
  close(fds[0]);
  EXPECT_TRUE(net::PeerClosed(fds[0])) << "a socket that is no more is not a peer that is there";
}

}  // namespace
}  // namespace gauntlet::http
