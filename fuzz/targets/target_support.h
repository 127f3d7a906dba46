// What the fuzz targets share: the injected bug set (AOTFUZZ_INJECT), the decoder's generation
// policy, case options from a flags byte, bounded parsing of text inputs and the in-process
// differential check that aborts through a crash site on a finding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "aot/bugs.h"
#include "generator/policy.h"
#include "ir/module.h"
#include "oracle/executor.h"
#include "oracle/oracle.h"

namespace aotfuzz::fuzz::targets {

/// The bugs injected into every case of this process: the comma-separated catalogue names of the
/// environment variable AOTFUZZ_INJECT, else those of the compile-time definition
/// AOTFUZZ_INJECT_DEFAULT (a string), else none. Read once; an unknown name prints the catalogue
/// and exits with status 2.
const aot::BugSet& injected_bugs();

/// "tuple-arg-first-field,..." for banners ("none" when nothing is injected).
std::string injected_bug_names();

/// The generation policy of the byte-decoder targets: the default policy with up to 24 ops and
/// dimensions of at most 4 (the bug classes are structural; small tensors keep an execution in
/// the tens of microseconds).
const generator::GenPolicy& fuzz_policy();

/// Case options from a flags byte: bit 0 the unpacked API, bit 1 (with bit 0) interface c, bit 2
/// no storage reuse, bit 3 no MergeCompilerRegions; the injected bugs; mod_name "default"; input
/// seed 1. One pipeline per input: libFuzzer reaches both merge settings through the byte.
oracle::CaseOptions case_options(std::uint8_t flags);

/// Limits of the text targets: larger inputs are skipped, not judged.
inline constexpr std::int64_t kMaxTextTensorElements = 4096;
inline constexpr std::size_t kMaxTextNodes = 4000;

/// The module in `data` if it parses, verifies, is an annotated graph (@main and nothing else:
/// partitioned functions carry names and attributes the pipeline takes as given) and stays within
/// the limits above.
std::optional<ir::Module> parse_bounded(const std::uint8_t* data, std::size_t size);

/// FNV-1a of the bytes (text targets derive their flags byte from it).
std::uint64_t hash_bytes(const std::uint8_t* data, std::size_t size);

/// The differential check of `annotated` in process (oracle::run_case_in_process) under
/// `options`. Returns normally when it passes or the input is invalid; on a finding it aborts
/// from that finding's crash site, reporting the module and the replay flags.
void check_in_process(const ir::Module& annotated, const oracle::CaseOptions& options);

/// fuzz_differential's verdict of `annotated`: prepared, run by `executor`, judged as run_case
/// judges (oracle::prepare_case, Executor::run, oracle::judge_case).
oracle::CaseResult differential_verdict(const ir::Module& annotated,
                                        const oracle::CaseOptions& options,
                                        oracle::Executor& executor);

/// The part of a report after the verdict: how to replay, then the module's text.
std::string finding_context(const ir::Module& annotated, const oracle::CaseOptions& options);

}  // namespace aotfuzz::fuzz::targets
