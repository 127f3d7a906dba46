// SARIF 2.1.0 logs of what `aotfuzz replay` and `aotfuzz check` found, for code-scanning
// dashboards: one result per unmet replay expectation (located at the file and line of its
// `// replay:` line) and per campaign finding (located at its bundle's reduced.relay), each
// message ending in the command that reproduces it.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bundles/replay.h"
#include "fuzz/campaign.h"

namespace aotfuzz::report {

/// The published schema's URI, written as the log's `$schema`.
inline constexpr const char* kSarifSchema =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";

/// A log with one run of the tool "aotfuzz" (`version`): results for every failed expectation of
/// `replays` (lines the environment could not run are none) and every campaign finding of
/// `findings`. Relative paths are taken from the working directory. A path under `root` (""
/// means source_root()) is written relative to it with `uriBaseId` `%SRCROOT%`; any other as an
/// absolute `file://` URI.
nlohmann::json sarif_log(const std::string& version,
                         const std::vector<bundles::FileReplay>& replays,
                         const std::vector<fuzz::Finding>& findings = {},
                         const std::string& root = "");

/// The repository the working directory is in (the nearest directory up with a `.git`), else the
/// working directory: what SARIF's `%SRCROOT%` stands for.
std::filesystem::path source_root();

}  // namespace aotfuzz::report
