// gemv v3 ("bulk", Hopper): the decode GEMV fed by bulk (TMA) copies into a shared-memory ring.
// Reads the gemv v2 repack in its grouped order (backend_gemv.cu: 16-row tiles, 1152-byte steps of
// 128 K in lane order, [group of `group` tiles][step][tile]); ntiles a multiple of the group.
// Contract: gemv_bulk_usable says whether this shape and GPU take this path (else the caller runs
// v2); gemv_bulk_run launches on a.stream and writes every element of C. No state of its own.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "backend.hpp"

namespace gauntlet::kernels {

// The gemv v2/v3 repack's K order within a 128-wide step: lane t (= lane % 4) of a warp holds 32
// elements of its row, as four 8-element chunks; chunk c (0..3) is elements gemv_chunk_k(t, c) ..
// +7 of the step. Chunks 0-1 are scale block t, chunks 2-3 block 4 + t. Why this order: at one
// chunk index the four lanes t of a row read 16-byte pieces 32 bytes apart, which with 16-byte
// row padding puts the 8 lanes of each shared-memory phase on 8 different bank groups (with 64
// bytes apart, lanes t and t+2 collided: every activation load took two wavefronts).
__host__ __device__ constexpr int gemv_chunk_k(int t, int c) { return (c / 2) * 64 + 16 * t + 8 * (c % 2); }

// True on sm_90 (Hopper) for M <= 16 when the groups of `group` 16-row tiles fill at least one wave
// of CTAs (no split over K is needed): a CTA for every SM (group <= 8, two CTAs per SM), or for 90%
// of them (group 14, one per SM); `sms`, `cc_major` describe the current device.
bool gemv_bulk_usable(int M, int N, int group, int cc_major, int sms);
// Tiles per CTA (the repack's group size) for this shape on `sms` SMs: 14 (one CTA per SM) where
// that fills the SMs at least as well as 7 (two per SM), else 7. GK_GEMV_GROUP=7, 8 or 14 forces
// one for comparisons.
int gemv_bulk_group(int N, int sms);
// Once per process before gemv_bulk_run (kernel attributes: the shared-memory ring size).
void gemv_bulk_prepare();
// pk: the v2 repack, ntiles 16-row tiles x steps 128-wide K steps. ring: 10 * stages + K steps
// per stage (32 default; 61, 22 for benchmarking at group <= 8, 42, 52 at group 14).
void gemv_bulk_run(const GemmArgs& a, const uint8_t* pk, int ntiles, int steps, int group, int ring);
cudaError_t gemv_bulk_probe();

}  // namespace gauntlet::kernels
