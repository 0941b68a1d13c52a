// Reads a JUnit XML report (docs/CLASSIFIER.md "Test runners") as pytest (`--junitxml`),
// GoogleTest (`--gtest_output=xml:PATH`) and ctest (`--output-junit`) write it: every <testcase>
// under a <testsuites> or <testsuite> root, with its <skipped>, <failure> or <error> and its
// <system-out>/<system-err>. Parsed by pugixml (no DTDs, no external entities are ever loaded).
// Pure, thread-safe; what it keeps is bounded by test_report.h's caps.
#pragma once

#include <string_view>

#include "classifier/test_report.h"
#include "core/status.h"

namespace gauntlet::classifier {

// The report in `xml`, or Invalid saying what is wrong ("not well-formed XML: ... at byte N", "the
// root element is <html>, not <testsuites> or <testsuite>"). A test GoogleTest did not run
// (DISABLED_, status="notrun" without <skipped>) is left out: nobody asked for it.
Result<TestReport> ParseJUnitXml(std::string_view xml);

}  // namespace gauntlet::classifier
