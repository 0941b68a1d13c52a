// Loads the suites found in a folder (*.json, *.yaml, *.yml; not recursive) into the store.
#pragma once
#include <string>
#include <vector>

#include "core/status.h"
#include "store/store.h"

namespace gauntlet::daemon {

struct LoadedSuite {
  std::string file, name;
  int version = 0;
  bool created = false;
  bool shadowed = false;  // the file was not loaded: the API registered this name (SuiteRow::shadowed)
  // Not empty: the file was skipped, and this says why ("b.yaml: stages[0].kind: unknown stage
  // kind ..."); name and version are then empty.
  std::string error;
};

// Validates every suite file in `dir` and stores the valid ones, one PutSuite each (a store error
// midway leaves the earlier ones stored and is returned). A file that does not parse or validate is
// skipped and listed with its `error` (file and field named): one typo must not keep a daemon, and
// every other suite, from starting. NotFound if `dir` is no folder. The folder's files become the
// suites' bundle (core/bundle.h); its path is kept as source_dir. Thread-safe as the Store is.
Result<std::vector<LoadedSuite>> LoadSuitesDir(const std::string& dir, store::Store& store);

}  // namespace gauntlet::daemon
