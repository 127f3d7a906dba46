// The fuzz targets' abort sites: one noinline function per failure class (crash_sites.def), so
// ClusterFuzz's stack-based bucketing files each class apart, and the dispatch from a verdict.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "oracle/verdict.h"

namespace aotfuzz::fuzz::targets {

/// One enumerator per row of crash_sites.def.
enum class CrashSite : unsigned {
#define AOTFUZZ_CRASH_SITE(function, description) function,
#include "fuzz/targets/crash_sites.def"
#undef AOTFUZZ_CRASH_SITE
  kCount
};

/// Each prints `report` (with the site's name and meaning) to stderr, then aborts. Never inlined
/// and never tail-called into, so the function is the top frame below abort().
#define AOTFUZZ_CRASH_SITE(function, description) [[noreturn]] void function(const std::string& report);
#include "fuzz/targets/crash_sites.def"
#undef AOTFUZZ_CRASH_SITE

/// A row of the table: the function's name and what the failure means.
struct CrashSiteInfo {
  CrashSite site;
  std::string_view name;
  std::string_view description;
  void (*abort)(const std::string& report);  ///< never returns
};

/// Every crash site, in crash_sites.def order.
const std::vector<CrashSiteInfo>& crash_site_table();

/// The site a finding verdict aborts from: by kind, then stage (mismatch, pipeline-error) or callee
/// kind (arity, crash). Pass, invalid-input and toolchain-error are not findings: kCount.
CrashSite crash_site_for(const oracle::Verdict& verdict);

/// Aborts from crash_site_for(verdict) with the verdict's signature and summary followed by
/// `context` (the input module, the replay flags) as the report.
[[noreturn]] void report_finding(const oracle::Verdict& verdict, const std::string& context);

}  // namespace aotfuzz::fuzz::targets
