#include "oracle/module_diff.h"

#include <dtl/dtl.hpp>

#include <algorithm>
#include <sstream>
#include <vector>

#include "ir/printer.h"

namespace aotfuzz::oracle {

std::string print_by_name(const ir::Module& module) {
  std::vector<std::pair<std::string, ir::Function>> functions = module.functions();
  std::sort(functions.begin(), functions.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  ir::Module sorted;
  for (auto& [name, fn] : functions) sorted.add(name, fn);
  return ir::print_module(sorted);
}

std::string print_by_name_and_key(const ir::Module& module) {
  ir::Module keyed;
  for (const auto& [name, fn] : module.functions()) {
    auto entries = fn->attrs().entries();
    std::stable_sort(entries.begin(), entries.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    ir::Attrs attrs;
    for (auto& [key, value] : entries) attrs = attrs.with(key, value);
    keyed.add(name, ir::FunctionNode::make(fn->params(), fn->body(), attrs, fn->ret_type()));
  }
  return print_by_name(keyed);
}

std::string unified_diff(const std::string& a, const std::string& b, const std::string& a_name,
                         const std::string& b_name) {
  if (a == b) return "";
  auto lines = [](const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
  };
  dtl::Diff<std::string, std::vector<std::string>> diff(lines(a), lines(b));
  diff.compose();
  diff.composeUnifiedHunks();
  std::ostringstream out;
  out << "--- " << a_name << "\n+++ " << b_name << "\n";
  diff.printUnifiedFormat(out);
  return out.str();
}

}  // namespace aotfuzz::oracle
