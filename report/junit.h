// JUnit XML reports (the format CI systems read): test suites of test cases, each passed,
// failed (a finding), in error (the environment could not run it) or skipped, with a message
// and details.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace aotfuzz::report {

/// One test case.
struct JUnitCase {
  std::string classname;
  std::string name;
  double seconds = 0;
  bool failed = false;
  std::string message;  ///< the failure's, error's or skip's one-line message
  std::string details;  ///< the failure's or error's body (replay commands, summaries)
  std::string output;   ///< <system-out>, for passing cases too
  /// Could not be run or judged because of the environment (no C compiler, a TVM that does not
  /// import): JUnit's `<error>`, which CI shows apart from a `<failure>`. Ignored when failed.
  bool error = false;
  /// Not run (stopped before it by Ctrl-C): `<skipped>`. Ignored when failed or error.
  bool skipped = false;
};

/// One suite.
struct JUnitSuite {
  std::string name;
  std::vector<JUnitCase> cases;
};

/// Escapes &, <, >, " and ' and drops characters XML 1.0 forbids (controls other than tab,
/// newline and carriage return; invalid UTF-8 bytes become '?').
std::string xml_escape(std::string_view text);

/// `<?xml ...?><testsuites ...><testsuite ...><testcase ...>...` with tests/failures/errors/
/// skipped/time totals.
std::string junit_xml(const std::vector<JUnitSuite>& suites, std::string_view name = "aotfuzz");

}  // namespace aotfuzz::report
