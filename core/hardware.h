// GPU inventory and matching: what a node has, what a trial needs, and the hardware class a result
// is filed under ("NVIDIA H200 · sm_90 · x1").
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/suite.h"
#include "core/status.h"

namespace gauntlet {

// Every function here is pure and thread-safe; what it returns is the caller's.

// One GPU as the worker's discovery (or a declared inventory) reports it.
struct Gpu {
  int index = 0;
  std::string name, uuid;
  int cc_major = 0, cc_minor = 0;
  int64_t memory_mb = 0;
  std::string Arch() const;  // "sm_90"
};

// What a node has: its GPUs, labels and driver/CUDA versions (docs/DESIGN.md's inventory format).
struct Inventory {
  std::vector<Gpu> gpus;
  std::map<std::string, std::string> labels;
  std::string driver, cuda;
};

// Parses docs/DESIGN.md's inventory format; errors name the field.
Result<Inventory> ParseInventory(const nlohmann::json& j);
// Ok when `labels` is an object of at most limits::kLabels string values within the label maxima
// (core/field_limits.h), else kInvalid naming `field` or the label. Pure.
Status CheckLabels(const nlohmann::json& labels, const std::string& field);
// The inverse of ParseInventory: what a node row stores and GET /nodes shows.
nlohmann::json InventoryJson(const Inventory& inv);

// What one trial asks of a node: the suite's requirements narrowed by the sweep's target.
struct Need {
  int gpus = 0;
  std::vector<std::string> arch;
  double min_memory_gb = 0;
  std::map<std::string, std::string> labels;
  std::string gpu_name;  // glob
};

// What `need` asks, as a person reads it: "requires.gpus: 1, arch: sm_120" ("requires nothing" when
// it asks nothing). Pure.
std::string DescribeNeed(const Need& need);

// Combines a suite's requirements with a target: the target's gpus and labels win where given;
// arch lists intersect when both give one (an empty intersection matches nothing); memory takes the
// larger; naming an arch or a GPU glob implies at least one GPU.
Need MakeNeed(const Requirements& suite, const Requirements& target, const std::string& gpu_name_glob);

// True if the GPU can serve `need`: arch (an "a"/"f" suffix ignored), memory (3% short of the ask
// still fits: cards report a little under their nominal size), name glob (case-insensitive).
bool GpuFits(const Gpu& g, const Need& need);
// True if the node's labels carry every label `need` asks for.
bool LabelsFit(const std::map<std::string, std::string>& labels, const Need& need);
// Picks `need.gpus` fitting GPUs of one model (a mixed set has no single hardware class) among
// `free` (Gpu::index values); nullopt if the labels don't fit or too few are free now. With
// need.gpus == 0 and fitting labels, an empty pick.
std::optional<std::vector<int>> PickGpus(const Inventory& inv, const std::vector<int>& free, const Need& need);
// True if the node could ever serve `need` (all its GPUs free).
bool CouldEverFit(const Inventory& inv, const Need& need);

// "NVIDIA H200 · sm_90 · x1", named by the first of `gpus`; "cpu" for none; "unknown" if that
// index is not in `inv`.
std::string HardwareClass(const Inventory& inv, const std::vector<int>& gpus);
// A node's own class: all of its GPUs ("cpu" if none).
std::string NodeHardware(const Inventory& inv);
// The sweep target that asks for exactly hardware class `hardware` (HardwareClass's form): "NAME ·
// sm_XY · xN" is {"gpu_name": NAME, "arch": "sm_XY", "gpus": N}; "cpu" is {} (any node: a suite that
// needs no GPU); nullopt for anything else ("unknown"). Pure.
std::optional<nlohmann::json> TargetForHardware(const std::string& hardware);

}  // namespace gauntlet
