// JUnit XML has no one schema: each runner writes its own dialect. What differs and is read here:
// pytest puts the exception ("Type: msg") in a failure's `message`; GoogleTest (its test cases carry
// `result`) puts "file:line" on the message's first line and every failure is an assertion unless it
// is a C++ exception; ctest's failure message is empty and the test's own output is <system-out>.
#include "classifier/junit_report.h"

#include <pugixml.hpp>

#include <cstdlib>
#include <vector>

#include "classifier/normalize.h"

namespace gauntlet::classifier {
namespace {

void AppendBounded(std::string* out, std::string_view text) {
  if (text.empty() || out->size() >= kMaxCaseDetail) return;
  if (!out->empty() && out->back() != '\n') out->push_back('\n');
  out->append(text.substr(0, kMaxCaseDetail - out->size()));
}

std::string_view FirstLine(std::string_view s) { return TrimSpace(s.substr(0, s.find('\n'))); }
std::string_view AfterFirstLine(std::string_view s) {
  size_t nl = s.find('\n');
  return nl == std::string_view::npos ? std::string_view() : s.substr(nl + 1);
}

TestCase ReadCase(const pugi::xml_node& tc) {
  TestCase c;
  const std::string_view cls = tc.attribute("classname").as_string(), name = tc.attribute("name").as_string();
  c.name = cls.empty() || cls == name ? std::string(name) : std::string(cls) + "." + std::string(name);
  if (pugi::xml_attribute t = tc.attribute("time")) c.seconds = std::strtod(t.value(), nullptr);
  const bool gtest = static_cast<bool>(tc.attribute("result"));
  c.end = TestEnd::kPassed;
  for (pugi::xml_node child : tc.children()) {
    const std::string_view tag = child.name();
    std::string_view msg = child.attribute("message").as_string();
    const std::string_view text = child.text().get();
    if (tag == "skipped") {
      c.end = std::string_view(child.attribute("type").as_string()) == "pytest.xfail" ? TestEnd::kXfailed : TestEnd::kSkipped;
      // GoogleTest: "file.cc:3\nreason"; pytest and ctest: the reason itself.
      if (gtest && msg.find('\n') != std::string_view::npos) msg = AfterFirstLine(msg);
      c.message = std::string(TrimSpace(msg));
      if (c.message.empty()) c.message = std::string(FirstLine(text));
      AppendBounded(&c.detail, text);
    } else if (tag == "failure" || tag == "error") {
      c.end = tag == "error" ? TestEnd::kError : TestEnd::kFailed;
      if (gtest && msg.find('\n') != std::string_view::npos) msg = AfterFirstLine(msg);  // "file.cc:4\n..."
      c.message = std::string(FirstLine(msg));
      AppendBounded(&c.detail, AfterFirstLine(msg));
      AppendBounded(&c.detail, text);
      if (gtest) {
        if (c.message.starts_with("C++ exception")) c.end = TestEnd::kError;
        c.assertion = c.end == TestEnd::kFailed;
      }
    } else if (tag == "system-out" || tag == "system-err") {
      AppendBounded(&c.detail, text);
    }
  }
  return c;
}

}  // namespace

Result<TestReport> ParseJUnitXml(std::string_view xml) {
  pugi::xml_document doc;
  // parse_default expands the five predefined entities and character references only; pugixml never
  // reads a DTD or an external entity, so the file cannot make it fetch or grow anything.
  const pugi::xml_parse_result ok = doc.load_buffer(xml.data(), xml.size(), pugi::parse_default, pugi::encoding_utf8);
  if (!ok)
    return Status::Invalid(std::string("not well-formed XML: ") + ok.description() + " at byte " +
                           std::to_string(ok.offset));
  pugi::xml_node root = doc.document_element();
  const std::string_view root_name = root.name();
  if (root_name != "testsuites" && root_name != "testsuite")
    return Status::Invalid("the root element is <" + std::string(root_name) + ">, not <testsuites> or <testsuite>");
  TestReport r;
  r.runner = "junit";
  r.complete = true;
  // Every <testcase>, in document order, under any nesting of <testsuite>s (an explicit stack: a
  // deeply nested file costs memory in proportion to its size, never the thread's stack).
  std::vector<pugi::xml_node> stack{root};
  while (!stack.empty()) {
    pugi::xml_node node = stack.back();
    stack.pop_back();
    if (std::string_view(node.name()) != "testcase") {
      std::vector<pugi::xml_node> kids;
      for (pugi::xml_node k = node.first_child(); k; k = k.next_sibling())
        if (k.type() == pugi::node_element) kids.push_back(k);
      stack.insert(stack.end(), kids.rbegin(), kids.rend());
      continue;
    }
    pugi::xml_node tc = node;
    TestCase c = ReadCase(tc);
    // GoogleTest lists DISABLED_ tests as status="notrun" result="suppressed": not run, not skipped.
    if (std::string_view(tc.attribute("status").as_string()) == "notrun" && c.end == TestEnd::kPassed) continue;
    CountEnd(&r.counts, c.end);
    AddCase(&r, std::move(c));
  }
  const int64_t n = r.counts.total();
  r.summary = std::to_string(n) + (n == 1 ? " test case" : " test cases") + " in the JUnit report";
  return r;
}

}  // namespace gauntlet::classifier
