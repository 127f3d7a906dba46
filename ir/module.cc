// Module bookkeeping.
#include "ir/module.h"

#include "ir/error.h"

namespace aotfuzz::ir {

void Module::add(const std::string& name, Function fn) {
  if (!fn) throw VerifyError("@" + name + ": null function");
  if (index_.count(name)) throw VerifyError("@" + name + " is defined twice");
  index_.emplace(name, functions_.size());
  functions_.emplace_back(name, std::move(fn));
}

void Module::replace(const std::string& name, Function fn) {
  auto it = index_.find(name);
  if (it == index_.end()) throw VerifyError("@" + name + " is not defined");
  functions_[it->second].second = std::move(fn);
}

const Function* Module::find(const std::string& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &functions_[it->second].second;
}

std::size_t Module::index_of(const std::string& name) const {
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
