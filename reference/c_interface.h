// TVM's C interface naming (interface_api="c"): the fields of `struct tvmgen_<mod>_inputs`,
// transcribed from python/tvm/micro/interface_api.py (generate_c_interface_header) apart from
// the pipeline under test, so the oracle's harness and its refusal check do not take the names
// from the code they judge.
#pragma once

#include <string>
#include <vector>

#include "ir/expr.h"

namespace aotfuzz::reference {

/// One field per flattened parameter of `main` (`<name>_<k>` for the fields of a tuple
/// parameter), every character outside [A-Za-z0-9_] replaced by '_' (TVM's `re.sub(r"\W", "_")`
/// on ASCII). Throws TvmRefuses where TVM gives no usable header: a field it has already
/// emitted (TVM raises "Sanitized input tensor name clash"), or a field that is no C identifier
/// (TVM writes it and the header does not compile).
std::vector<std::string> c_interface_input_names(const ir::Function& main);

}  // namespace aotfuzz::reference
