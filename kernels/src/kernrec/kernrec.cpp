// libgauntlet_kernrec.so: a CUDA injection library that records every kernel a process launches
// (issue 30; docs/KERNELS.md "Kernel recorder"). The CUDA driver loads it when
// CUDA_INJECTION64_PATH names it and calls InitializeInjection() at cuInit, in every process that
// initialises CUDA (children inherit the variable, so a stage's whole process tree is followed).
//
// It uses CUPTI's activity API (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, which does not serialise
// kernels) with buffer callbacks, aggregates the records by kernel name in memory (bounded: at most
// kMaxNames distinct names; launches of further names are counted in `names_dropped`), and writes
// one small text file per process into $GAUNTLET_KERNREC_DIR:
//
//   kernrec 1                       format and version
//   pid 1234
//   state started|running|complete  complete only once the process exited through exit()/atexit
//   cupti ok|<why CUPTI could not be used>
//   dropped N                       records CUPTI dropped (buffers full)
//   names_dropped N                 launches of kernels past the name cap
//   kernel COUNT TOTAL_NS MAX_NS NAME   one per distinct kernel, NAME demangled, to the end of line
//
// The file is written atomically (temp file + rename) at start, every snapshot interval by a
// background thread ($GAUNTLET_KERNREC_SNAPSHOT_MS, default 2000; 0 turns it off) and at exit, so a
// process killed by a signal leaves its last snapshot (state running) and the reader knows the
// record may be incomplete. libcupti is dlopen'ed, never linked: a process on a node without CUPTI
// runs exactly as without the library, and its file says `cupti <reason>`.
//
// Nothing here may make the traced program fail: every error is recorded and swallowed.
#include <cupti_activity.h>
#include <cxxabi.h>
#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

namespace {

constexpr size_t kMaxNames = 4096;          // distinct kernel names kept per process
constexpr size_t kMaxNameChars = 1024;      // a longer demangled name is cut
constexpr size_t kBufferBytes = 4u << 20;   // one CUPTI activity buffer

struct Agg {
  uint64_t count = 0, total_ns = 0, max_ns = 0;
};

// The CUPTI entry points this library uses, resolved from a dlopen'ed libcupti.
struct Cupti {
  decltype(&cuptiActivityRegisterCallbacks) register_callbacks = nullptr;
  decltype(&cuptiActivityEnable) enable = nullptr;
  decltype(&cuptiActivityFlushAll) flush_all = nullptr;
  decltype(&cuptiActivityGetNextRecord) next_record = nullptr;
  decltype(&cuptiActivityGetNumDroppedRecords) num_dropped = nullptr;
  decltype(&cuptiGetResultString) result_string = nullptr;
};

// All state of the process's recording. The map and counters are guarded by mu; they are touched
// by CUPTI's buffer-completion thread, the snapshot thread and the exit handler.
struct State {
  std::mutex mu;
  std::unordered_map<std::string, Agg> kernels;  // mangled name -> totals
  uint64_t dropped = 0, names_dropped = 0;
  std::string cupti_status = "ok";
  std::string dir;
  bool final_written = false;
  std::atomic<bool> active{false};
  Cupti api;
  std::mutex wake_mu;
  std::condition_variable wake;
  bool stopping = false;
};

State& S() {
  static State* s = new State;  // never destroyed: the exit handler and CUPTI's thread may outlive statics
  return *s;
}

std::string Demangle(const std::string& mangled) {
  int status = 0;
  char* d = abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status);
  std::string out = status == 0 && d ? d : mangled;
  std::free(d);
  for (char& c : out)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  if (out.size() > kMaxNameChars) out.resize(kMaxNameChars);
  return out;
}

// Writes the record file; the caller holds S().mu.
void WriteLocked(const char* state) {
  State& s = S();
  if (s.dir.empty()) return;
  const std::string path = s.dir + "/kernrec." + std::to_string(getpid()) + ".txt";
  const std::string tmp = path + ".tmp";
  FILE* f = std::fopen(tmp.c_str(), "w");
  if (!f) return;
  std::fprintf(f, "kernrec 1\npid %d\nstate %s\ncupti %s\ndropped %llu\nnames_dropped %llu\n", getpid(), state,
               s.cupti_status.c_str(), static_cast<unsigned long long>(s.dropped),
               static_cast<unsigned long long>(s.names_dropped));
  for (const auto& [name, a] : s.kernels)
    std::fprintf(f, "kernel %llu %llu %llu %s\n", static_cast<unsigned long long>(a.count),
                 static_cast<unsigned long long>(a.total_ns), static_cast<unsigned long long>(a.max_ns),
                 Demangle(name).c_str());
  const bool ok = std::fflush(f) == 0;
  std::fclose(f);
  if (ok) std::rename(tmp.c_str(), path.c_str());
  else std::remove(tmp.c_str());
}

void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;  // as many as fit
}

void CUPTIAPI BufferCompleted(CUcontext ctx, uint32_t stream, uint8_t* buffer, size_t /*size*/, size_t valid) {
  State& s = S();
  {
    std::lock_guard lock(s.mu);
    CUpti_Activity* rec = nullptr;
    while (s.api.next_record(buffer, valid, &rec) == CUPTI_SUCCESS) {
      if (rec->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL && rec->kind != CUPTI_ACTIVITY_KIND_KERNEL) continue;
      // The kernel record's name, start and end keep their places across CUPTI's record versions
      // (new fields are appended), so the header's latest struct reads any 13.x library's records.
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(rec);
      const std::string name = k->name ? k->name : "(unnamed)";
      const uint64_t ns = k->end > k->start ? k->end - k->start : 0;
      auto it = s.kernels.find(name);
      if (it == s.kernels.end()) {
        if (s.kernels.size() >= kMaxNames) {
          ++s.names_dropped;
          continue;
        }
        it = s.kernels.emplace(name, Agg{}).first;
      }
      ++it->second.count;
      it->second.total_ns += ns;
      if (ns > it->second.max_ns) it->second.max_ns = ns;
    }
    size_t dropped = 0;
    if (s.api.num_dropped(ctx, stream, &dropped) == CUPTI_SUCCESS) s.dropped += dropped;
  }
  std::free(buffer);
}

void AtExit() {
  State& s = S();
  if (!s.active.exchange(false)) return;
  {
    std::lock_guard lock(s.wake_mu);
    s.stopping = true;
  }
  s.wake.notify_all();
  if (s.api.flush_all) (void)s.api.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  std::lock_guard lock(s.mu);
  WriteLocked("complete");
  s.final_written = true;
}

// A forked child inherits the parent's counts but not its threads: it must not write them as its own.
void AtForkChild() {
  State& s = S();
  s.active = false;
  s.dir.clear();
}

void SnapshotLoop(int period_ms) {
  State& s = S();
  std::unique_lock lock(s.wake_mu);
  while (!s.stopping) {
    s.wake.wait_for(lock, std::chrono::milliseconds(period_ms));
    if (s.stopping || !s.active) break;
    lock.unlock();
    (void)s.api.flush_all(0);
    {
      std::lock_guard l(s.mu);
      if (!s.final_written) WriteLocked("running");
    }
    lock.lock();
  }
}

// dlopen's libcupti: by soname (a copy the process loaded already, e.g. PyTorch's, is found
// first), then $GAUNTLET_KERNREC_CUPTI, then beside this library, then the toolkit's usual places.
void* OpenCupti(std::string* why) {
  std::string tried;
  auto attempt = [&](const std::string& p) -> void* {
    if (p.empty()) return nullptr;
    void* h = dlopen(p.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (!h) tried += (tried.empty() ? "" : "; ") + std::string(dlerror());
    return h;
  };
  // By soname first: a libcupti the process has loaded already (PyTorch's wheel loads its own at
  // import) is matched by soname, and two copies of CUPTI in one process would fight.
  for (const char* n : {"libcupti.so.13", "libcupti.so.12", "libcupti.so"})
    if (void* h = attempt(n)) return h;
  if (const char* e = std::getenv("GAUNTLET_KERNREC_CUPTI"))
    if (void* h = attempt(e)) return h;
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&OpenCupti), &info) && info.dli_fname) {
    std::string dir = info.dli_fname;
    dir = dir.substr(0, dir.find_last_of('/') == std::string::npos ? 0 : dir.find_last_of('/'));
    if (void* h = attempt(dir + "/libcupti.so.13")) return h;
  }
  for (const char* p : {"/usr/local/cuda/lib64/libcupti.so.13", "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13"})
    if (void* h = attempt(p)) return h;
  *why = "libcupti not loadable (" + tried.substr(0, 400) + ")";
  return nullptr;
}

std::string ResultText(CUptiResult r) {
  const char* str = nullptr;
  if (S().api.result_string && S().api.result_string(r, &str) == CUPTI_SUCCESS && str) return str;
  return "CUPTI error " + std::to_string(static_cast<int>(r));
}

bool Resolve(void* h, Cupti* api) {
  api->register_callbacks = reinterpret_cast<decltype(api->register_callbacks)>(dlsym(h, "cuptiActivityRegisterCallbacks"));
  api->enable = reinterpret_cast<decltype(api->enable)>(dlsym(h, "cuptiActivityEnable"));
  api->flush_all = reinterpret_cast<decltype(api->flush_all)>(dlsym(h, "cuptiActivityFlushAll"));
  api->next_record = reinterpret_cast<decltype(api->next_record)>(dlsym(h, "cuptiActivityGetNextRecord"));
  api->num_dropped = reinterpret_cast<decltype(api->num_dropped)>(dlsym(h, "cuptiActivityGetNumDroppedRecords"));
  api->result_string = reinterpret_cast<decltype(api->result_string)>(dlsym(h, "cuptiGetResultString"));
  return api->register_callbacks && api->enable && api->flush_all && api->next_record && api->num_dropped;
}

}  // namespace

// The driver's entry point (CUDA_INJECTION64_PATH). Returns 1 (success to the driver) whatever
// happens: a recorder that cannot record must never stop the program.
extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  static std::once_flag once;
  std::call_once(once, [] {
    State& s = S();
    const char* dir = std::getenv("GAUNTLET_KERNREC_DIR");
    if (!dir || !*dir) return;  // not asked to record: do nothing at all
    s.dir = dir;
    std::string why;
    void* h = OpenCupti(&why);
    std::lock_guard lock(s.mu);
    if (!h) {
      s.cupti_status = why;
      WriteLocked("complete");  // nothing will be recorded: say so now
      s.final_written = true;
      return;
    }
    if (!Resolve(h, &s.api)) {
      s.cupti_status = "libcupti lacks the activity API";
      WriteLocked("complete");
      s.final_written = true;
      return;
    }
    CUptiResult r = s.api.register_callbacks(BufferRequested, BufferCompleted);
    if (r == CUPTI_SUCCESS) r = s.api.enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    if (r != CUPTI_SUCCESS) {
      s.cupti_status = "CUPTI refused: " + ResultText(r);
      WriteLocked("complete");
      s.final_written = true;
      return;
    }
    s.active = true;
    WriteLocked("started");
    pthread_atfork(nullptr, nullptr, AtForkChild);
    std::atexit(AtExit);
    int period = 2000;
    if (const char* p = std::getenv("GAUNTLET_KERNREC_SNAPSHOT_MS")) period = std::atoi(p);
    if (period > 0) std::thread(SnapshotLoop, period < 100 ? 100 : period).detach();
  });
  return 1;
}
