// The holder of the tests' precompiled header (tests/CMakeLists.txt, gauntlet_test_pch): CMake
// compiles the header once for this target and every test and bench executable reuses it. Nothing
// here is linked anywhere.
