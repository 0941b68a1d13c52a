// gemv v3 ("bulk", sm_90+): the decode GEMV fed by bulk (TMA) copies into a shared-memory ring.
// Reads the gemv v2 repack (backend_gemv.cu: 16-row tiles, 1152-byte steps of 128 K in lane order).
// Contract: gemv_bulk_usable says whether this shape and GPU take this path (else the caller runs
// v2); gemv_bulk_run launches on a.stream and writes every element of C. No state of its own.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "backend.hpp"

namespace gauntlet::kernels {

// True on sm_90+ when the 128-row groups fill at least one wave of CTAs (N >= 128 * #SMs), so no
// split over K is needed; `sms`, `cc_major` describe the current device.
bool gemv_bulk_usable(int M, int N, int ntiles, int cc_major, int sms);
// Once per process before gemv_bulk_run (kernel attributes: the shared-memory ring size).
void gemv_bulk_prepare();
// pk: the v2 repack, ntiles 16-row tiles x steps 128-wide K steps. `stages`: ring depth (4, 6, 8).
void gemv_bulk_run(const GemmArgs& a, const uint8_t* pk, int ntiles, int steps, int stages);
cudaError_t gemv_bulk_probe();

}  // namespace gauntlet::kernels
