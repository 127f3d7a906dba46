// Module bookkeeping.
#include "ir/module.h"

#include "ir/error.h"

namespace aotfuzz::ir {

void Module::add(const std::string& name, Function fn) {
  if (!fn) throw VerifyError("@" + name + ": null function");
  if (index_of(name) != functions_.size()) throw VerifyError("@" + name + " is defined twice");
  functions_.emplace_back(name, std::move(fn));
  if (functions_.size() == kIndexFrom) {
    for (std::size_t i = 0; i < functions_.size(); ++i) index_.emplace(functions_[i].first, i);
  } else if (functions_.size() > kIndexFrom) {
    index_.emplace(name, functions_.size() - 1);
  }
}

void Module::replace(const std::string& name, Function fn) {
  const std::size_t i = index_of(name);
  if (i == functions_.size()) throw VerifyError("@" + name + " is not defined");
  functions_[i].second = std::move(fn);
}

const Function* Module::find(const std::string& name) const {
  const std::size_t i = index_of(name);
  return i == functions_.size() ? nullptr : &functions_[i].second;
}

std::size_t Module::index_of(const std::string& name) const {
  if (functions_.size() < kIndexFrom) {
    for (std::size_t i = 0; i < functions_.size(); ++i) {
      if (functions_[i].first == name) return i;
    }
    return functions_.size();
  }
  auto it = index_.find(name);
  return it == index_.end() ? functions_.size() : it->second;
}

const Function& Module::main() const {
  const Function* f = find("main");
  if (f == nullptr) throw VerifyError("module has no @main");
  return *f;
}

GlobalVar Module::global_var(const std::string& name) const {
  const Function* f = find(name);
  if (f == nullptr) throw VerifyError("@" + name + " is not defined");
  return GlobalVarNode::make(name, (*f)->type());
}

}  // namespace aotfuzz::ir
