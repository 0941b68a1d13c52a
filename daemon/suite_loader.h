// Loads the suites found in a folder (*.json, *.yaml, *.yml; not recursive) into the store.
#pragma once
#include <string>
#include <vector>

#include "core/status.h"
#include "store/store.h"

namespace gauntlet {

struct LoadedSuite {
  std::string file, name;
  int version = 0;
  bool created = false;
  bool shadowed = false;  // the file was not loaded: the API registered this name (SuiteRow::shadowed)
};

// Validates every suite file in `dir`; stores them only if all are valid (a typo must not half-load
// a folder), one PutSuite each (a store error midway leaves the earlier ones stored). An error names
// the file and the field at fault; NotFound if `dir` is no folder. The suite's folder is kept for
// {suite_dir}. Thread-safe as the Store is.
Result<std::vector<LoadedSuite>> LoadSuitesDir(const std::string& dir, Store& store);

}  // namespace gauntlet
