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

# One precompiled header for every C++ target under the given folders (the tests and the benches):
# gtest, nlohmann/json and the standard headers nearly each of their sources includes, parsed once
# and reused by the rest (REUSE_FROM), instead of parsed again by each of their ~35 translation units
# (docs/BENCHMARKS.md "Fourth round"). Third-party and standard headers only: an edit to our headers
# never rebuilds it. Its owner, gauntlet_test_pch, links nothing but gtest and json, so it is built
# with only the definitions every test and bench has (g++ refuses a PCH built with a -D that the using
# compile lacks: "not used because `SPDLOG_FMT_EXTERNAL' not defined"), and a target's own extra
# definitions do not matter while no header in the PCH reads them. Where g++ cannot use it, it says
# so (-Winvalid-pch) and reads the headers instead: slower, never wrong.
# -DCMAKE_DISABLE_PRECOMPILE_HEADERS=ON turns it off (what a check that each source includes what it
# uses wants, with GAUNTLET_UNITY_BUILD=OFF). ccache caches these compiles only with the sloppiness
# below, which its manual asks for with precompiled headers.
function(gauntlet_share_test_pch)
  set(owner gauntlet_test_pch)
  # CONFIGURE, not WRITE: rewritten only when its text changes, so a re-configure rebuilds nothing.
  file(CONFIGURE OUTPUT ${CMAKE_BINARY_DIR}/gauntlet_test_pch.cc
    CONTENT "// The translation unit that builds the tests' PCH.\n")
  add_library(${owner} OBJECT ${CMAKE_BINARY_DIR}/gauntlet_test_pch.cc)
  target_link_libraries(${owner} PRIVATE GTest::gtest nlohmann_json::nlohmann_json)
  # -pthread (it defines _REENTRANT) on the owner and on every user: most get it from the layers'
  # libraries already, and a PCH built with it is refused by a compile without it, and the reverse.
  target_compile_options(${owner} PRIVATE -pthread)
  target_compile_definitions(${owner} PRIVATE ${GAUNTLET_SOURCE_DIR_DEFINE})
  target_precompile_headers(${owner} PRIVATE <gtest/gtest.h> <nlohmann/json.hpp> <algorithm> <atomic>
    <chrono> <filesystem> <fstream> <functional> <map> <memory> <mutex> <set> <sstream> <string>
    <thread> <vector>)
  set(launcher "")
  if(CCACHE)
    set(launcher ${CMAKE_COMMAND} -E env
      CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime ${CCACHE})
    set_property(TARGET ${owner} PROPERTY CXX_COMPILER_LAUNCHER ${launcher})
  endif()
  set(dirs ${ARGN})
  while(dirs)
    list(POP_FRONT dirs dir)
    get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
    list(APPEND dirs ${subdirs})
    get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
    foreach(t IN LISTS targets)
      # Only what links gtest (directly, or through the tests' support library): a bench of one
      # layer alone (gauntlet-classify-bench) has no gtest to precompile.
      get_target_property(type ${t} TYPE)
      get_target_property(links ${t} LINK_LIBRARIES)
      if(NOT type MATCHES "^(EXECUTABLE|STATIC_LIBRARY)$" OR NOT links MATCHES "GTest::|gauntlet_test_support")
        continue()
      endif()
      target_precompile_headers(${t} REUSE_FROM ${owner})
      target_compile_options(${t} PRIVATE -pthread)
      if(launcher)
        set_property(TARGET ${t} PROPERTY CXX_COMPILER_LAUNCHER ${launcher})
      endif()
    endforeach()
  endwhile()
endfunction()
