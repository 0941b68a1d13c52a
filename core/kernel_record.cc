#include "core/kernel_record.h"

#include <algorithm>
#include <charconv>

#include "core/kernel_families.h"
#include "core/utf8.h"

namespace gauntlet {
using nlohmann::json;

namespace {

// `s` cut to `max` bytes, as valid UTF-8: kernel names are ASCII, so a text that is not valid
// UTF-8 has each byte above 0x7F replaced by '?' rather than refused.
std::string Clean(std::string_view s, size_t max) {
  std::string out(s.substr(0, max));
  if (!ValidUtf8(out))
    for (char& c : out)
      if (static_cast<unsigned char>(c) > 0x7F) c = '?';
  return out;
}

bool ParseCount(std::string_view s, int64_t* out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size() && *out >= 0;
}

// Splits off the first space-separated word of *rest.
std::string_view Word(std::string_view* rest) {
  const size_t sp = rest->find(' ');
  std::string_view w = rest->substr(0, sp);
  *rest = sp == std::string_view::npos ? std::string_view() : rest->substr(sp + 1);
  return w;
}

void AddKernel(std::map<std::string, KernelStat>* kernels, int64_t* names_dropped, const std::string& name,
               const KernelStat& k) {
  auto it = kernels->find(name);
  if (it == kernels->end()) {
    if (kernels->size() >= kMaxRecordNames) {
      *names_dropped += k.count;
      return;
    }
    it = kernels->emplace(name, KernelStat{}).first;
  }
  it->second.count += k.count;
  it->second.total_ns += k.total_ns;
  it->second.max_ns = std::max(it->second.max_ns, k.max_ns);
}

}  // namespace

Result<ProcessKernels> ParseKernelRecord(std::string_view text) {
  ProcessKernels p;
  size_t line_no = 0;
  bool header = false;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    const std::string where = "line " + std::to_string(line_no);
    std::string_view rest = line;
    const std::string_view key = Word(&rest);
    if (!header) {
      if (key != "kernrec" || rest != "1") return Status::Invalid("not a kernrec 1 record", where);
      header = true;
      continue;
    }
    if (key == "kernel") {
      KernelStat k;
      if (!ParseCount(Word(&rest), &k.count) || !ParseCount(Word(&rest), &k.total_ns) ||
          !ParseCount(Word(&rest), &k.max_ns) || rest.empty())
        return Status::Invalid("a kernel line is 'kernel COUNT TOTAL_NS MAX_NS NAME'", where);
      std::string name = Clean(rest, kMaxRecordNameChars);
      AddKernel(&p.kernels, &p.names_dropped, name, k);
    } else if (key == "pid") {
      if (!ParseCount(rest, &p.pid)) return Status::Invalid("pid is a number", where);
    } else if (key == "state") {
      if (rest != "started" && rest != "running" && rest != "complete")
        return Status::Invalid("state is started, running or complete", where);
      p.state = std::string(rest);
    } else if (key == "cupti") {
      p.cupti = Clean(rest, 500);
    } else if (key == "dropped") {
      if (!ParseCount(rest, &p.dropped)) return Status::Invalid("dropped is a number", where);
    } else if (key == "names_dropped") {
      int64_t n = 0;
      if (!ParseCount(rest, &n)) return Status::Invalid("names_dropped is a number", where);
      p.names_dropped += n;
    } else {
      return Status::Invalid("unknown line '" + Clean(key, 40) + "'", where);
    }
  }
  if (!header) return Status::Invalid("empty record", "line 1");
  if (p.state.empty()) return Status::Invalid("no state line", "state");
  return p;
}

bool KernelRecord::Complete() const {
  return processes > 0 && incomplete == 0 && dropped == 0 && names_dropped == 0 && problems.empty();
}

void AddProblem(KernelRecord* rec, std::string problem) {
  if (rec->problems.size() < 8) rec->problems.push_back(std::move(problem));
}

void MergeProcess(KernelRecord* rec, const ProcessKernels& p) {
  ++rec->processes;
  if (p.state != "complete") ++rec->incomplete;
  if (p.cupti != "ok") AddProblem(rec, "pid " + std::to_string(p.pid) + ": " + p.cupti);
  rec->dropped += p.dropped;
  rec->names_dropped += p.names_dropped;
  for (auto& [name, k] : p.kernels) AddKernel(&rec->kernels, &rec->names_dropped, name, k);
}

void MergeRecord(KernelRecord* rec, const KernelRecord& other) {
  rec->processes += other.processes;
  rec->incomplete += other.incomplete;
  rec->dropped += other.dropped;
  rec->names_dropped += other.names_dropped;
  for (auto& p : other.problems) AddProblem(rec, p);
  for (auto& [name, k] : other.kernels) AddKernel(&rec->kernels, &rec->names_dropped, name, k);
}

json KernelRecordJson(const KernelRecord& rec, size_t top) {
  std::vector<const std::pair<const std::string, KernelStat>*> order;
  int64_t launches = 0, gpu_ns = 0;
  for (auto& e : rec.kernels) {
    order.push_back(&e);
    launches += e.second.count;
    gpu_ns += e.second.total_ns;
  }
  // By total time, then by name: the same record always lists the same way.
  std::sort(order.begin(), order.end(), [](auto* a, auto* b) {
    return a->second.total_ns != b->second.total_ns ? a->second.total_ns > b->second.total_ns : a->first < b->first;
  });
  json list = json::array();
  for (size_t i = 0; i < order.size() && i < top; ++i)
    list.push_back({{"name", order[i]->first},
                    {"family", KernelFamily(order[i]->first)},
                    {"count", order[i]->second.count},
                    {"total_ns", order[i]->second.total_ns},
                    {"max_ns", order[i]->second.max_ns}});
  return {{"processes", rec.processes},
          {"complete", rec.Complete()},
          {"incomplete", rec.incomplete},
          {"dropped", rec.dropped},
          {"names_dropped", rec.names_dropped},
          {"launches", launches},
          {"gpu_ns", gpu_ns},
          {"distinct", rec.kernels.size()},
          {"carrying_family", CarryingFamily(rec.kernels)},
          {"problems", rec.problems},
          {"top", list},
          {"omitted", order.size() > top ? order.size() - top : 0}};
}

Result<json> NormalizeKernelRecordJson(const json& j, size_t top) {
  if (!j.is_object()) return Status::Invalid("kernels is an object", "kernels");
  json out = json::object();
  for (const char* k : {"processes", "incomplete", "dropped", "names_dropped", "launches", "gpu_ns", "distinct", "omitted"}) {
    if (!j.contains(k)) continue;
    if (!j[k].is_number_integer() || j[k].get<int64_t>() < 0)
      return Status::Invalid("a non-negative integer", std::string("kernels.") + k);
    out[k] = j[k];
  }
  out["complete"] = j.contains("complete") && j["complete"].is_boolean() && j["complete"].get<bool>();
  out["carrying_family"] = j.contains("carrying_family") && j["carrying_family"].is_string()
                               ? Clean(j["carrying_family"].get<std::string>(), 200)
                               : "";
  json problems = json::array();
  if (j.contains("problems") && j["problems"].is_array())
    for (auto& p : j["problems"])
      if (p.is_string() && problems.size() < 8) problems.push_back(Clean(p.get<std::string>(), 500));
  out["problems"] = problems;
  json list = json::array();
  if (j.contains("top")) {
    if (!j["top"].is_array()) return Status::Invalid("a list of kernels", "kernels.top");
    for (size_t i = 0; i < j["top"].size(); ++i) {
      const json& k = j["top"][i];
      const std::string f = "kernels.top[" + std::to_string(i) + "]";
      if (!k.is_object() || !k.contains("name") || !k["name"].is_string())
        return Status::Invalid("a kernel is an object with a name", f);
      if (list.size() >= top) continue;
      json e = {{"name", Clean(k["name"].get<std::string>(), kMaxRecordNameChars)}};
      e["family"] = k.contains("family") && k["family"].is_string()
                        ? Clean(k["family"].get<std::string>(), 200)
                        : KernelFamily(e["name"].get<std::string>());
      for (const char* n : {"count", "total_ns", "max_ns"}) {
        if (!k.contains(n) || !k[n].is_number_integer() || k[n].get<int64_t>() < 0)
          return Status::Invalid("a non-negative integer", f + "." + n);
        e[n] = k[n];
      }
      list.push_back(std::move(e));
    }
  }
  out["top"] = list;
  return out;
}

}  // namespace gauntlet
