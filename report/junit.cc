// JUnit XML writer.
#include "report/junit.h"

#include <cstdio>

namespace aotfuzz::report {
namespace {

std::string seconds_attr(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", s < 0 ? 0.0 : s);
  return buf;
}

// Length of the valid UTF-8 sequence at text[i], or 0.
std::size_t utf8_length(std::string_view text, std::size_t i) {
  const auto c = static_cast<unsigned char>(text[i]);
  std::size_t n = c < 0x80           ? 1
                  : (c >> 5) == 0x6  ? 2
                  : (c >> 4) == 0xe  ? 3
                  : (c >> 3) == 0x1e ? 4
                                     : 0;
  if (n == 0 || i + n > text.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    if ((static_cast<unsigned char>(text[i + k]) >> 6) != 0x2) return 0;
  }
  return n;
}

}  // namespace

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x80) {
      std::size_t n = utf8_length(text, i);
      if (n == 0) {
        out += '?';
        ++i;
      } else {
        out.append(text.substr(i, n));
        i += n;
      }
      continue;
    }
    ++i;
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        if (u < 0x20 && c != '\t' && c != '\n' && c != '\r') {
          out += '?';
        } else {
          out += c;
        }
    }
  }
  return out;
}

namespace {

struct Counts {
  std::size_t tests = 0, failures = 0, errors = 0, skipped = 0;
  double seconds = 0;
  void add(const JUnitCase& c) {
    ++tests;
    failures += c.failed;
    errors += !c.failed && c.error;
    skipped += !c.failed && !c.error && c.skipped;
    seconds += c.seconds;
  }
};

}  // namespace

std::string junit_xml(const std::vector<JUnitSuite>& suites, std::string_view name) {
  Counts all;
  for (const auto& s : suites) {
    for (const auto& c : s.cases) all.add(c);
  }
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<testsuites name=\"" + xml_escape(name) + "\" tests=\"" + std::to_string(all.tests) +
         "\" failures=\"" + std::to_string(all.failures) + "\" errors=\"" +
         std::to_string(all.errors) + "\" skipped=\"" + std::to_string(all.skipped) + "\" time=\"" +
         seconds_attr(all.seconds) + "\">\n";
  for (const auto& s : suites) {
    Counts n;
    for (const auto& c : s.cases) n.add(c);
    out += "  <testsuite name=\"" + xml_escape(s.name) + "\" tests=\"" +
           std::to_string(s.cases.size()) + "\" failures=\"" + std::to_string(n.failures) +
           "\" errors=\"" + std::to_string(n.errors) + "\" skipped=\"" + std::to_string(n.skipped) +
           "\" time=\"" + seconds_attr(n.seconds) + "\">\n";
    for (const auto& c : s.cases) {
      out += "    <testcase classname=\"" + xml_escape(c.classname) + "\" name=\"" +
             xml_escape(c.name) + "\" time=\"" + seconds_attr(c.seconds) + "\"";
      const bool marked = c.failed || c.error || c.skipped;
      if (!marked && c.output.empty()) {
        out += "/>\n";
        continue;
      }
      out += ">\n";
      if (c.failed) {
        out += "      <failure message=\"" + xml_escape(c.message) + "\" type=\"finding\">" +
               xml_escape(c.details) + "</failure>\n";
      } else if (c.error) {
        out += "      <error message=\"" + xml_escape(c.message) + "\" type=\"environment\">" +
               xml_escape(c.details) + "</error>\n";
      } else if (c.skipped) {
        out += "      <skipped message=\"" + xml_escape(c.message) + "\"/>\n";
      }
      if (!c.output.empty()) out += "      <system-out>" + xml_escape(c.output) + "</system-out>\n";
      out += "    </testcase>\n";
    }
    out += "  </testsuite>\n";
  }
  out += "</testsuites>\n";
  return out;
}

}  // namespace aotfuzz::report
