#include "cli/wait_interrupt.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <iostream>

#include "net/http_client.h"

namespace gauntlet::cli {

namespace {
// The handler's one job: a byte down the pipe (async-signal-safe). Whichever thread the kernel
// picks for a process-directed SIGINT (the HTTP and event-stream threads too) runs it.
int g_pipe_write = -1;
void OnInterrupt(int) {
  const int saved = errno;
  if (g_pipe_write >= 0) {
    const char b = 1;
    [[maybe_unused]] ssize_t n = ::write(g_pipe_write, &b, 1);
  }
  errno = saved;
}

// True when an interrupt arrived within `ms` (its byte is consumed).
bool NextInterrupt(int fd, int ms) {
  pollfd p{fd, POLLIN, 0};
  while (true) {
    const int r = ::poll(&p, 1, ms);
    if (r < 0 && errno == EINTR) continue;  // the handler ran here: the byte is in the pipe
    if (r <= 0) return false;
    char b;
    return ::read(fd, &b, 1) == 1;
  }
}
}  // namespace

WaitInterrupt::WaitInterrupt(const net::Conn& conn, int64_t sweep) : conn_(conn), sweep_(sweep) {
  if (::pipe2(pipe_, O_CLOEXEC | O_NONBLOCK) != 0) pipe_[0] = pipe_[1] = -1;
  g_pipe_write = pipe_[1];
  struct sigaction sa {};
  sa.sa_handler = OnInterrupt;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, &old_action_);
  thread_ = std::thread([this] { Run(); });
}

WaitInterrupt::~WaitInterrupt() {
  done_ = true;
  thread_.join();
  sigaction(SIGINT, &old_action_, nullptr);
  g_pipe_write = -1;
  for (int fd : pipe_)
    if (fd >= 0) ::close(fd);
}

void WaitInterrupt::Run() {
  // Short waits, so the destructor's `done_` is seen soon after the sweep finishes.
  while (!done_)
    if (NextInterrupt(pipe_[0], 200)) break;
  if (done_) return;
  const std::string n = std::to_string(sweep_);
  // Each message is one string written at once: stderr is unbuffered, so a message written piece by
  // piece could be cut by the progress line the main thread prints meanwhile ("^C: sweep {...} 1 cancelled").
  auto say = [](const std::string& text) { std::cerr << text << std::flush; };
  std::cout << std::flush;
  say("\n^C: sweep " + n + " keeps running; gauntlet cancel " + n + " stops it (Ctrl-C again now cancels it)\n");
  if (NextInterrupt(pipe_[0], kSecondWindowMs)) {
    net::Client client(conn_.server, conn_.token);
    auto r = client.Send("POST", "/api/v1/sweeps/" + n + "/cancel", "", "application/json");
    if (r.ok() && r->status == 200) say("^C: sweep " + n + " cancelled\n");
    else
      say("gauntlet: could not cancel sweep " + n + ": " +
          (r.ok() ? std::to_string(r->status) + " " + r->body.substr(0, 200) : r.status().message()) + "; gauntlet cancel " +
          n + " stops it\n");
  }
  // The main thread is inside the follow (a long-poll, an event stream): end here, 130 as a shell
  // reports an interrupted command.
  _exit(130);
}

}  // namespace gauntlet::cli
