# How the tree builds fast on a small machine (docs/DECISIONS.md "Build time"; numbers in
# docs/BENCHMARKS.md "Build and test time"). Included once, from the top-level CMakeLists.txt, before
# any target: the settings below are the defaults every target picks up.

# Unity builds: each target compiles its sources in batches of GAUNTLET_UNITY_BATCH files, one
# translation unit per batch. Every source here includes nlohmann/json, spdlog/fmt, CLI11 or
# gtest and instantiates the same templates at -O2 -g; a batch parses and optimises them once.
# A file whose internal names collide with a batch mate's is kept out of its batch with
# set_source_files_properties(f PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON) in its folder's
# CMakeLists.txt. GAUNTLET_UNITY_BUILD=OFF builds one object per source (what to use to check that
# each .cc includes what it uses: a batch can hide a missing #include).
# GAUNTLET_UNITY_BATCH 0 (the default) makes each target one batch: a fresh clone's build compiles
# json's, fmt's and gtest's templates once per target instead of once per 8 sources (daemon/'s 20
# sources: 50 CPU-s in three batches of 8, 38 in one; docs/BENCHMARKS.md). The price is an edit's
# rebuild, which recompiles the whole target; a session of many edits to one layer can configure
# -DGAUNTLET_UNITY_BATCH=8.
option(GAUNTLET_UNITY_BUILD "Compile each target's sources in batches (faster cold builds)" ON)
set(GAUNTLET_UNITY_BATCH 0 CACHE STRING "Sources per unity batch (0: one batch per target)")
if(GAUNTLET_UNITY_BUILD)
  set(CMAKE_UNITY_BUILD ON)
  set(CMAKE_UNITY_BUILD_BATCH_SIZE ${GAUNTLET_UNITY_BATCH})
endif()

# lld where it is installed (scripts/install-deps.sh installs it): the test executables each link
# every layer with its debug info, and GNU ld spends seconds on each; lld does the same link in a
# fraction of it. Only the C++ links: nvcc, linking CUDA, takes no -fuse-ld. A machine without lld
# links with the default linker, as before.
include(CheckLinkerFlag)
check_linker_flag(CXX -fuse-ld=lld GAUNTLET_HAVE_LLD)
if(GAUNTLET_HAVE_LLD)
  add_link_options($<$<LINK_LANGUAGE:CXX>:-fuse-ld=lld>)
endif()

# g++ takes a .cc included into a batch for a header, and warns (-Wsubobject-linkage) about every
# class defined there with a member of a type from the file's anonymous namespace: true of a header,
# not of a source file, which a batch does not make one.
if(GAUNTLET_UNITY_BUILD AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-Wno-subobject-linkage>)
endif()

# Debug info: line tables and function names (-g1) in the default build, not full -g. Backtraces,
# perf and sanitizer reports name file:line with -g1; what it drops is variables and types for gdb,
# which cost about a third of every translation unit's compile time (http_client.cc: 61.8 CPU-s at
# -O2 -g, 42.5 at -O2 -g1; fleet_test.cc 7.0 at -Og -g, 4.8 at -Og -g1; docs/BENCHMARKS.md "Build and
# test time"). GAUNTLET_FULL_DEBUG_INFO=ON (or the `debug` preset) brings full -g back for a session
# with gdb. nvcc's host and device code keep their own flags.
option(GAUNTLET_FULL_DEBUG_INFO "Full debug info (-g) instead of line tables (-g1) in RelWithDebInfo" OFF)
if(NOT GAUNTLET_FULL_DEBUG_INFO)
  add_compile_options($<$<AND:$<CONFIG:RelWithDebInfo>,$<COMPILE_LANGUAGE:CXX>>:-g1>)
endif()
