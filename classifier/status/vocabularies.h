// The status tables behind classifier/status_vocabulary.h, one file per vocabulary in this folder,
// and the one policy every table's verdicts follow. Each table names its source (header and
// version) and how its rows were made (scripts/gen-status-messages.cc prints the name, number and
// message columns from the headers and libraries installed; verdicts and reasons are a person's).
//
// Verdict policy (docs/DESIGN.md "Trial lifecycle" says what each verdict means):
//  - passed: success, and answers that are not errors (cudaErrorNotReady and ncclInProgress are
//    an asynchronous poll's "not yet"; SIGCHLD ends nothing; a Python Warning is printed and the
//    program goes on).
//  - unsupported: this hardware, driver or build cannot run the request: no kernel image or binary
//    for the GPU, invalid device function, PTX from a newer toolchain, JIT missing or disabled,
//    *_NOT_SUPPORTED / *_NOT_IMPLEMENTED / UNIMPLEMENTED, an architecture or device feature the GPU
//    lacks, a limit of this GPU the launch exceeds, ENOSYS / EOPNOTSUPP, NotImplementedError.
//  - oom: an allocation failed. GPU memory keeps the classifier's key "oom:cuda" (CUDA and the
//    CUDA libraries, XLA's RESOURCE_EXHAUSTED); host memory "oom:host" (ENOMEM, MemoryError, a
//    library's host allocation).
//  - infra_error: the node, its driver, its fabric, its network or its filesystem failed, not the
//    config (no GPU, driver too old or mismatched, fabric manager not ready, ECC/NVLink faults, GPU
//    busy or held, MPS, licences, disk full or failing, network down). The classifier's keys stay
//    where the meaning is the same: infra_error:no_gpu, :driver_mismatch, :gpu_fault,
//    :gpu_unavailable, :disk_full (ENOSPC), :port_in_use (EADDRINUSE).
//  - timeout: a deadline or time limit (cudaErrorLaunchTimeout, cudaErrorTimeout,
//    DEADLINE_EXCEEDED, ETIMEDOUT, TimeoutError, SIGALRM, SIGXCPU), and a stopped process, which
//    hangs until its limit (SIGSTOP, SIGTSTP).
//  - wrong_output: it ran and the result failed a check: Python's AssertionError, a numeric fault
//    the library reports in the data (cuDNN's FP overflow, a zero pivot, a singular matrix).
//  - crashed: everything else: invalid values and handles, faults in kernels, internal errors,
//    program bugs, a process killed or terminated from outside (SIGKILL alone does not say the OOM
//    killer did it). The classifier's keys stay: crashed:illegal_memory_access,
//    :illegal_instruction, :misaligned_address, :device_assert, :unspecified_launch_failure,
//    :cublas_execution_failed, :cublas_internal_error, crashed:signal:<NAME>.
// A value without a key gets the signature "<verdict>:<vocabulary id>:<name>" (StatusHit).
#pragma once

#include "classifier/status_vocabulary.h"

namespace gauntlet::classifier {

// Each returns its table (static storage, built on first use; thread-safe).
const StatusVocabulary& CudaRuntimeVocabulary();  // cuda_runtime.cc
const StatusVocabulary& CudaDriverVocabulary();   // cuda_driver.cc
const StatusVocabulary& CublasVocabulary();       // cublas.cc
const StatusVocabulary& CudnnVocabulary();        // cudnn.cc
const StatusVocabulary& CufftVocabulary();        // cufft.cc
const StatusVocabulary& CusparseVocabulary();     // cusparse.cc
const StatusVocabulary& CusolverVocabulary();     // cusolver.cc
const StatusVocabulary& CurandVocabulary();       // curand.cc
const StatusVocabulary& NvrtcVocabulary();        // nvrtc.cc
const StatusVocabulary& NcclVocabulary();         // nccl.cc
const StatusVocabulary& ErrnoVocabulary();        // errno.cc
const StatusVocabulary& SignalsVocabulary();      // signals.cc
const StatusVocabulary& AbslVocabulary();         // absl.cc
const StatusVocabulary& PythonVocabulary();       // python.cc

}  // namespace gauntlet::classifier
