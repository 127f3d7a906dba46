// File loading and error mapping shared by the subcommands.
#include "cli/common.h"

#include <fstream>
#include <sstream>

#include "ir/error.h"
#include "ir/parser.h"
#include "ir/verify.h"

namespace aotfuzz::cli {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CommandError(kBadInput, path + ": cannot open file");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw CommandError(kBadInput, path + ": read error");
  return ss.str();
}

ir::Module load_module(const std::string& path) {
  std::string text = read_file(path);
  try {
    ir::Module m = ir::parse_module(text, path);
    ir::verify(m);
    return m;
  } catch (const ir::ParseError& e) {
    throw CommandError(kBadInput, e.what());
  } catch (const ir::Error& e) {
    throw CommandError(kBadInput, path + ": error: " + e.what());
  }
}

}  // namespace aotfuzz::cli
