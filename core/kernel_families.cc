#include "core/kernel_families.h"

#include <vector>

#include "core/user_regex.h"

namespace gauntlet {

namespace {

// The classes, most specific first: a run that launched a fused attention kernel was carried by
// it, whatever GEMMs and softmaxes ran beside it (a float64 reference, say).
enum class Class { kFusedAttention = 0, kUnfusedAttention = 1, kGemm = 2, kOther = 3 };

struct Family {
  Class cls;
  const char* name;     // what a signature says: the kernels' own prefix, then what it is
  const char* pattern;  // RE2, searched in the demangled kernel name
};

// The table of known kernel families (docs/KERNELS.md "Kernel families"). Each pattern is the
// prefix or namespace the project itself gives its kernels, so one entry covers every tile size,
// dtype and architecture variant. First match wins within the table's order.
const std::vector<Family>& Families() {
  static const std::vector<Family> k = {
      // PyTorch's vendored FlashAttention-2: void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<...>>
      {Class::kFusedAttention, "flash_fwd (FlashAttention-2)", R"(pytorch_flash::|\bflash_fwd_(splitkv_)?kernel\b)"},
      {Class::kFusedAttention, "flash_bwd (FlashAttention-2 backward)", R"(\bflash_bwd_\w*kernel\b)"},
      // FlashAttention-3 (Hopper) and the flash_attn package's kernels.
      {Class::kFusedAttention, "flash::FlashAttn (FlashAttention-3)", R"(\bflash::FlashAttn|\bflash::enable_sm90)"},
      // PyTorch's CUTLASS memory-efficient attention (xFormers'): fmha_cutlassF_f32_aligned_64x64_rf_sm80
      {Class::kFusedAttention, "fmha_cutlassF (memory-efficient)", R"(\bfmha_cutlassF_)"},
      {Class::kFusedAttention, "fmha_cutlassB (memory-efficient backward)", R"(\bfmha_cutlassB_)"},
      // cuDNN's generated SDPA kernels: cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_...
      {Class::kFusedAttention, "cudnn_sdpa (cuDNN)", R"(cudnn_generated_fort_native_sdpa|\bcudnn\w*sdpa)"},
      {Class::kFusedAttention, "flashinfer (FlashInfer)", R"(\bflashinfer::\w*(Prefill|Decode|MLA|Attention))"},
      {Class::kFusedAttention, "paged_attention (vLLM)", R"(\bpaged_attention_v[12]_kernel)"},
      // PyTorch's flex_attention lowers to a Triton kernel named triton_tem_fused_...flex_attention
      {Class::kFusedAttention, "flex_attention (Triton)", R"(triton_tem_fused\w*flex|flex_attention)"},
      {Class::kFusedAttention, "fmha (fused attention)", R"(\bfmha_|\bfmha::)"},
      // The parts of attention computed unfused (SDPA's MATH backend, transformers' eager path).
      {Class::kUnfusedAttention, "softmax (unfused attention)", R"((?i)softmax)"},
      // Matrix products: cuBLAS (sm90_xmma_gemm_..., nvjet_..., ampere_..._gemm), CUTLASS, gemv.
      {Class::kGemm, "gemm (cuBLAS/CUTLASS)", R"((?i)gemm|\bnvjet_|\bcutlass::Kernel|gemv|\bxmma_)"},
      // Everything PyTorch computes element by element or by reduction.
      {Class::kOther, "elementwise (PyTorch)", R"(\bat::native::\w*(elementwise|vectorized|unrolled)\w*_kernel)"},
      {Class::kOther, "reduce (PyTorch)", R"(\bat::native::\w*reduce_kernel)"},
  };
  return k;
}

const std::vector<UserRegex>& Compiled() {
  static const std::vector<UserRegex> k = [] {
    std::vector<UserRegex> out;
    for (auto& f : Families()) out.push_back(UserRegex::Fixed(f.pattern));
    return out;
  }();
  return k;
}

// The index of `name`'s family in Families(), or -1.
int FamilyIndex(std::string_view name) {
  const auto& re = Compiled();
  for (size_t i = 0; i < re.size(); ++i)
    if (re[i].Search(name)) return static_cast<int>(i);
  return -1;
}

// The function's own name: "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, ...>(...)"
// -> "cunn_SoftMaxForward"; a C name ("sm90_xmma_gemm_...") is itself.
std::string BaseName(std::string_view name) {
  std::string s(name);
  for (const std::string anon : {"(anonymous namespace)::", "{lambda"}) {
    for (size_t p; (p = s.find(anon)) != std::string::npos;) s.erase(p, anon == "{lambda" ? s.size() - p : anon.size());
  }
  if (s.rfind("void ", 0) == 0) s.erase(0, 5);
  // Cut at the first '<' or '(' outside nothing: what follows are template arguments or parameters.
  const size_t cut = s.find_first_of("<(");
  if (cut != std::string::npos) s.resize(cut);
  const size_t ns = s.rfind("::");
  if (ns != std::string::npos) s.erase(0, ns + 2);
  while (!s.empty() && s.back() == ' ') s.pop_back();
  if (s.empty()) s = std::string(name.substr(0, 80));
  return s.empty() ? "(unnamed)" : s.substr(0, 200);
}

}  // namespace

std::string KernelFamily(std::string_view name) {
  const int i = FamilyIndex(name);
  return i >= 0 ? Families()[i].name : BaseName(name);
}

std::string CarryingFamily(const std::map<std::string, KernelStat>& kernels) {
  // Per known family: its class and GPU time; the unknown kernel with the most time as a fallback.
  std::map<int, int64_t> time_by_family;
  std::string top_unknown;
  int64_t top_unknown_ns = -1;
  for (auto& [name, k] : kernels) {
    const int i = FamilyIndex(name);
    if (i >= 0) time_by_family[i] += k.total_ns;
    else if (k.total_ns > top_unknown_ns) {
      top_unknown_ns = k.total_ns;
      top_unknown = name;
    }
  }
  int best = -1;
  for (auto& [i, ns] : time_by_family) {
    if (best < 0) {
      best = i;
      continue;
    }
    const Class a = Families()[i].cls, b = Families()[best].cls;
    if (a < b || (a == b && ns > time_by_family[best])) best = i;
  }
  if (best >= 0) return Families()[best].name;
  return top_unknown.empty() ? "" : BaseName(top_unknown);
}

}  // namespace gauntlet
