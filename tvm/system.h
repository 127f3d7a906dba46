// Apache TVM as a system under test (oracle/sut.h): a TVM build driven through its Python API by a
// long-lived driver process (tvm/driver.h), its cases prepared by tvm/case_flow.h.
#pragma once

#include <memory>

#include "oracle/sut.h"

namespace aotfuzz::tvm {

/// TVM at spec.home (empty: $AOTFUZZ_TVM_HOME), with the build at spec.fixed_home as its fixed
/// build when given. Its driver starts on the first case. Nothing is checked here:
/// SystemUnderTest::problem says whether the homes are TVM builds.
std::shared_ptr<const oracle::SystemUnderTest> make_tvm_system(oracle::SutSpec spec);

}  // namespace aotfuzz::tvm
