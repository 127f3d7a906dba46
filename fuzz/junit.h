// JUnit XML reports (the format CI systems read): test suites of test cases, each passed or
// failed with a message and details.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace aotfuzz::fuzz {

/// One test case.
struct JUnitCase {
  std::string classname;
  std::string name;
  double seconds = 0;
  bool failed = false;
  std::string message;  ///< the failure's one-line message
  std::string details;  ///< the failure's body (replay commands, summaries)
  std::string output;   ///< <system-out>, for passing cases too
};

/// One suite.
struct JUnitSuite {
  std::string name;
  std::vector<JUnitCase> cases;
};

/// Escapes &, <, >, " and ' and drops characters XML 1.0 forbids (controls other than tab,
/// newline and carriage return; invalid UTF-8 bytes become '?').
std::string xml_escape(std::string_view text);

/// `<?xml ...?><testsuites ...><testsuite ...><testcase ...>...` with tests/failures/time totals.
std::string junit_xml(const std::vector<JUnitSuite>& suites, std::string_view name = "aotfuzz");

}  // namespace aotfuzz::fuzz
