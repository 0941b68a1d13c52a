// Run-time loading of the few cuBLAS entry points the tool uses.
#include "cublas_dl.hpp"

#include <dlfcn.h>

#include <mutex>
#include <stdexcept>

namespace gauntlet::kernels::cublas {

namespace {
Api g_api;
int g_version = 0;
std::once_flag g_once;

template <typename F>
bool sym(void* h, const char* name, F& out) {
  out = reinterpret_cast<F>(dlsym(h, name));
  return out != nullptr;
}

void load() {
  const char* names[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so"};
  void* h = nullptr;
  for (const char* n : names) {
    h = dlopen(n, RTLD_NOW | RTLD_LOCAL);
    if (h) { g_api.library = n; break; }
  }
  if (!h) {
    const char* e = dlerror();
    g_api.error = std::string("cannot load cuBLAS: ") + (e ? e : "libcublas.so not found");
    return;
  }
  bool ok = sym(h, "cublasCreate_v2", g_api.create) && sym(h, "cublasDestroy_v2", g_api.destroy) &&
            sym(h, "cublasSetStream_v2", g_api.set_stream) && sym(h, "cublasGemmEx", g_api.gemm_ex);
  if (!ok) {
    g_api.error = "cuBLAS is missing an expected entry point in " + g_api.library;
    return;
  }
  cublasStatus_t (*getv)(cublasHandle_t, int*) = nullptr;
  if (sym(h, "cublasGetVersion_v2", getv)) {
    cublasHandle_t tmp;
    if (g_api.create(&tmp) == CUBLAS_STATUS_SUCCESS) {
      getv(tmp, &g_version);
      g_api.destroy(tmp);
    }
  }
}
}  // namespace

const Api& api() {
  std::call_once(g_once, load);
  return g_api;
}

int version() {
  api();
  return g_version;
}

void check(cublasStatus_t st, const char* what) {
  if (st != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string(what) + " failed: cuBLAS status " + std::to_string(int(st)));
}

void gemm_bf16_nt(cublasHandle_t h, int M, int N, int K, float alpha, const void* A, const void* B, void* C) {
  const float beta = 0.0f;
  // Row-major C[M,N] = A B^T is column-major C^T[N,M] = B[N,K] (as col-major KxN, transposed) x A^T.
  check(api().gemm_ex(h, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &alpha, B, CUDA_R_16BF, K, A, CUDA_R_16BF, K, &beta,
                      C, CUDA_R_16BF, N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
        "cublasGemmEx");
}

}  // namespace gauntlet::kernels::cublas
