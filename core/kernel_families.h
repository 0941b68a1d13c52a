// Which family of kernels a kernel belongs to (FlashAttention, CUTLASS memory-efficient attention,
// cuDNN attention, unfused softmax, GEMM ...), by one table of known families (kernel_families.cc,
// docs/KERNELS.md "Kernel families"), and which family carried a recorded run. What a `fallback`
// verdict's signature names: `fallback:fmha_cutlassF (memory-efficient)`.
#pragma once
#include <map>
#include <string>
#include <string_view>

#include "core/kernel_record.h"

namespace gauntlet {

// Pure and thread-safe (the table is immutable static data).

// The family of a demangled kernel name: the table's family when one of its patterns matches
// ("fmha_cutlassF (memory-efficient)"), else the name's base (the function's own name without
// namespaces, template arguments or parameters: "cunn_SoftMaxForward"); never empty.
std::string KernelFamily(std::string_view name);
// The family that carried `kernels`: among kernels of known families, those of the most specific
// class (fused attention, then unfused attention parts, then GEMM, then other known families) and,
// in it, the family with the most GPU time; with no known family, the base name of the kernel with
// the most GPU time. "" when `kernels` is empty.
std::string CarryingFamily(const std::map<std::string, KernelStat>& kernels);

}  // namespace gauntlet
