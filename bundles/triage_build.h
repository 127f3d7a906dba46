// A TVM build to triage findings on: what a campaign's options and the triage both name, apart
// from the triage itself (bundles/triage.h), which reads bundles and so sits above the campaign's
// types.
#pragma once

#include <filesystem>
#include <string>

namespace aotfuzz::bundles {

/// One TVM build to triage on, in the order builds are listed (oldest first, by convention).
struct TriageBuild {
  std::string label;
  std::filesystem::path home;
};

}  // namespace aotfuzz::bundles
