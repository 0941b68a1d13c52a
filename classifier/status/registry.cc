// The status vocabularies as one list (status_vocabulary.h): adding one is its table's file in this
// folder and a line here. Also the lookups over the list that need no matching: a value by name,
// and the short triggers the classifier's prefilter reads (status_vocabulary.h).
#include <cctype>
#include <set>
#include <string>
#include <unordered_map>

#include "classifier/status/vocabularies.h"

namespace gauntlet::classifier {
namespace {
std::string RegistryLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}
}  // namespace

const std::vector<const StatusVocabulary*>& StatusVocabularies() {
  static const std::vector<const StatusVocabulary*> k = {
      &CudaRuntimeVocabulary(), &CudaDriverVocabulary(), &CublasVocabulary(),  &CudnnVocabulary(),
      &CufftVocabulary(),       &CusparseVocabulary(),   &CusolverVocabulary(), &CurandVocabulary(),
      &NvrtcVocabulary(),       &NcclVocabulary(),       &ErrnoVocabulary(),    &SignalsVocabulary(),
      &AbslVocabulary(),        &PythonVocabulary(),
  };
  return k;
}

const StatusValue* FindValue(std::string_view id, std::string_view name) {
  // Built once: the exception judge asks for every exception line it reads.
  static const std::unordered_map<std::string, const StatusValue*> index = [] {
    std::unordered_map<std::string, const StatusValue*> m;
    for (const StatusVocabulary* v : StatusVocabularies())
      for (const StatusValue& value : v->values) m.try_emplace(std::string(v->id) + '\0' + std::string(value.name), &value);
    return m;
  }();
  auto it = index.find(std::string(id) + '\0' + std::string(name));
  return it == index.end() ? nullptr : it->second;
}

const std::vector<std::string>& StatusTriggerNeedles() {
  // How the libraries name a status in a log: the enum names' prefixes (cudaError..., CUDA_ERROR_...,
  // CUBLAS_STATUS_..., ncclSystemError), the wrappers that print a message ("CUDA error: ...",
  // PyTorch's and CuPy's; "NCCL error in: ..."; "cuBLAS error"), Python's "[Errno N]" and Rust's
  // "(os error N)", and absl's "CODE:". A context word alone ("cuda", "nccl") is on most lines of a
  // GPU server's log, so it is no trigger: FindStatus still reads it once a trigger is there.
  static const std::vector<std::string> k = [] {
    std::set<std::string> out = {"cudaerror",        "cuda_error_",      "cuda error",      "cuda failure",
                                 "cuda driver error", "cuda runtime error", "curesult",      "cublas_status_",
                                 "cublas error",     "cudnn_status_",    "cudnn error",     "cufft_",
                                 "cufft error",      "cusparse_status_", "cusparse error",  "cusolver_status_",
                                 "cusolver error",   "curand_status_",   "curand error",    "nvrtc_error_",
                                 "nvrtc error",      "nccl error",       "ncclsystemerror", "ncclremoteerror",
                                 "ncclinternalerror", "ncclinvalid",     "ncclunhandled",   "errno",
                                 "os error",
                                 // numba's CUDA driver errors ("CudaAPIError: [700] Call to cuMemcpyDtoH
                                 // results in UNKNOWN_CUDA_ERROR"), CuPy's ("CUDARuntimeError: cudaError...").
                                 "cudaapierror", "cudaruntimeerror", "cudadrivererror"};
    for (const StatusVocabulary* v : StatusVocabularies())
      if (v->id == "absl")
        for (const StatusValue& value : v->values) out.insert(RegistryLower(value.name) + ":");
    return std::vector<std::string>(out.begin(), out.end());
  }();
  return k;
}


}  // namespace gauntlet::classifier
