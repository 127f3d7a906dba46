// libFuzzer target fuzz_parser: any bytes either parse or raise ir::ParseError (never another
// error, a crash or a hang); a parsed module that verifies prints to text that parses back to a
// structurally equal module printing to the same text.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <string_view>

#include "fuzz/targets/crash_sites.h"
#include "ir/error.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/structural.h"
#include "ir/verify.h"

namespace targets = aotfuzz::fuzz::targets;
namespace ir = aotfuzz::ir;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::string input = "--- input ---\n" + std::string(text);
  ir::Module parsed;
  try {
    parsed = ir::parse_module(text);
  } catch (const ir::ParseError&) {
    return 0;
  } catch (const ir::Error& e) {
    targets::crash_on_parse_error_type(std::string("parse_module threw ") + e.what() + "\n" + input);
  } catch (const std::exception& e) {
    targets::crash_on_unexpected_exception(std::string("parse_module threw ") + e.what() + "\n" + input);
  }
  try {
    ir::verify(parsed);
  } catch (const ir::VerifyError&) {
    return 0;  // parsed, but not a valid module: printing it is not specified
  } catch (const std::exception& e) {
    targets::crash_on_unexpected_exception(std::string("verify threw ") + e.what() + "\n" + input);
  }
  std::string printed, reprinted;
  ir::Module reparsed;
  try {
    printed = ir::print_module(parsed);
    reparsed = ir::parse_module(printed, "printed.relay");
  } catch (const ir::Error& e) {
    targets::crash_on_reparse_failure(e.what() + ("\n--- printed ---\n" + printed) + "\n" + input);
  } catch (const std::exception& e) {
    targets::crash_on_unexpected_exception(std::string("print/reparse threw ") + e.what() + "\n" + input);
  }
  reprinted = ir::print_module(reparsed);
  if (reprinted != printed) {
    targets::crash_on_round_trip_mismatch("--- printed ---\n" + printed + "\n--- reprinted ---\n" +
                                          reprinted + "\n" + input);
  }
  if (!ir::structural_equal(parsed, reparsed)) {
    targets::crash_on_round_trip_structure_change("--- printed ---\n" + printed + "\n" + input);
  }
  return 0;
}
