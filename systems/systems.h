// Every system under test, by the name `--sut` gives it.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "oracle/case_flags.h"
#include "oracle/sut.h"

namespace aotfuzz::systems {

/// The names `--sut` takes, the default first.
std::vector<std::string> system_names();

/// The system `spec` names, ready to use: the builtin pipeline, or TVM at spec.home (else
/// $AOTFUZZ_TVM_HOME), with its fixed build at spec.fixed_home when given. Throws
/// std::invalid_argument, one line, for a name it does not know. Does not look at the homes
/// (a replay of a bundle whose TVM is gone is a toolchain-error verdict, not bad input);
/// SystemUnderTest::problem says whether they are usable.
std::shared_ptr<const oracle::SystemUnderTest> make_system(const oracle::SutSpec& spec);

/// The system that comes in builds of its own source (a home directory each): the one triage
/// compares across builds and bisection builds from its history. Its name, and the system at a
/// build's home. Only this room knows which system that is.
std::string_view built_system_name();
std::shared_ptr<const oracle::SystemUnderTest> make_built_system(const std::string& home);

/// parse_case_flags with every system known.
oracle::CaseOptions parse_case_flags(std::string_view flags);

}  // namespace aotfuzz::systems
