// Reads the JUnit XML file a command stage names (`"junit": "{workdir}/junit.xml"`;
// docs/SUITE_FORMAT.md "command stages") safely: never through a symlink, only a regular file, at
// most kMaxJUnitBytes, then parsed by classifier::ParseJUnitXml. Thread-safe; blocks on the read only.
#pragma once

#include <cstddef>
#include <string>

#include "classifier/test_report.h"
#include "core/status.h"

namespace gauntlet::worker {

inline constexpr size_t kMaxJUnitBytes = 16u << 20;  // 16 MiB: a report of ~50,000 cases with output

// The report in the file at `path`, or Invalid with a sentence naming the file and what is wrong
// ("junit file /w/junit.xml: missing (the test runner wrote no report)", "...: is a symlink; not
// followed", "...: not well-formed XML: ..."). A missing or unreadable file is never an empty pass.
// `owner`, when set, must own the file (the trial's user: workers/bounded_file.h).
Result<classifier::TestReport> ReadJUnitFile(const std::string& path, std::optional<uid_t> owner = std::nullopt);

}  // namespace gauntlet::worker
