// Shared by the GPU tests: skip visibly when there is no GPU.
#pragma once
#include <gtest/gtest.h>

#include "device_info.hpp"

#define SKIP_WITHOUT_GPU()                                                              \
  do {                                                                                  \
    const auto gk_dev_ = ::gauntlet::kernels::query_device();                           \
    if (gk_dev_.no_gpu) GTEST_SKIP() << "no CUDA device (" << gk_dev_.why << ")";       \
  } while (0)
