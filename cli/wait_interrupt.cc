#include "cli/wait_interrupt.h"

#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <iostream>

#include "http/http_client.h"

namespace gauntlet::cli {

namespace {
sigset_t IntSet() {
  sigset_t s;
  sigemptyset(&s);
  sigaddset(&s, SIGINT);
  return s;
}

// The next SIGINT within `ms`; false when the time passed first.
bool NextInterrupt(int ms) {
  const sigset_t s = IntSet();
  timespec ts{ms / 1000, static_cast<long>(ms % 1000) * 1000000L};
  while (true) {
    if (sigtimedwait(&s, nullptr, &ts) == SIGINT) return true;
    if (errno != EINTR) return false;  // EAGAIN: the time passed
  }
}
}  // namespace

WaitInterrupt::WaitInterrupt(const http::Conn& conn, int64_t sweep) : conn_(conn), sweep_(sweep) {
  const sigset_t s = IntSet();
  pthread_sigmask(SIG_BLOCK, &s, &old_mask_);
  thread_ = std::thread([this] { Run(); });
}

WaitInterrupt::~WaitInterrupt() {
  done_ = true;
  thread_.join();
  pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
}

void WaitInterrupt::Run() {
  // Short waits, so the destructor's `done_` is seen soon after the sweep finishes.
  while (!done_)
    if (NextInterrupt(200)) break;
  if (done_) return;
  const std::string n = std::to_string(sweep_);
  std::cout << std::flush;
  std::cerr << "\n^C: sweep " << n << " keeps running; gauntlet cancel " << n << " stops it (Ctrl-C again now cancels it)"
            << std::endl;
  if (NextInterrupt(kSecondWindowMs)) {
    http::Client client(conn_.server, conn_.token);
    auto r = client.Send("POST", "/api/v1/sweeps/" + n + "/cancel", "", "application/json");
    if (r.ok() && r->status == 200) std::cerr << "^C: sweep " << n << " cancelled" << std::endl;
    else
      std::cerr << "gauntlet: could not cancel sweep " << n << ": "
                << (r.ok() ? std::to_string(r->status) + " " + r->body.substr(0, 200) : r.status().message())
                << "; gauntlet cancel " << n << " stops it" << std::endl;
  }
  // The main thread is inside the follow (a long-poll, an event stream): end here, 130 as a shell
  // reports an interrupted command.
  _exit(130);
}

}  // namespace gauntlet::cli
