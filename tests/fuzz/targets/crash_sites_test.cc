// The crash sites: every finding class has its own abort function, non-findings have none, and
// report_finding really aborts from the site named in its report.
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <sstream>

#include "fuzz/targets/crash_sites.h"
#include "tests/support/files.h"

namespace aotfuzz {
namespace {

using fuzz::targets::CrashSite;
using fuzz::targets::crash_site_for;
using fuzz::targets::crash_site_table;
using oracle::Stage;
using oracle::Verdict;

// One verdict per distinct signature class the targets can report.
std::vector<Verdict> finding_classes() {
  std::vector<Verdict> v;
  for (Stage s : {Stage::kMerge, Stage::kPartition, Stage::kFuse, Stage::kCodegen}) {
    v.push_back({s, oracle::Mismatch{}});
  }
  for (auto k : {oracle::CalleeKind::kKernel, oracle::CalleeKind::kExternal}) {
    v.push_back({Stage::kCodegen, oracle::Arity{"f", k, 3, 2, oracle::ArityEvidence::kStatic}});
    v.push_back({Stage::kRun, oracle::Crash{11, k, "f", ""}});
  }
  v.push_back({Stage::kRun, oracle::Crash{11, std::nullopt, "", ""}});
  v.push_back({Stage::kRun, oracle::InputClobbered{}});
  v.push_back({Stage::kCodegen, oracle::OutputUnwritten{}});
  v.push_back({Stage::kRun, oracle::Timeout{}});
  v.push_back({Stage::kCodegen, oracle::CompileError{}});
  for (Stage s : {Stage::kMerge, Stage::kPartition, Stage::kFuse, Stage::kCodegen, Stage::kRun}) {
    v.push_back({s, oracle::PipelineError{"x"}});
  }
  return v;
}

TEST(CrashSites, EveryFindingClassAbortsFromItsOwnSite) {
  std::set<CrashSite> seen;
  for (const auto& v : finding_classes()) {
    const CrashSite site = crash_site_for(v);
    ASSERT_NE(site, CrashSite::kCount) << oracle::signature(v);
    EXPECT_TRUE(seen.insert(site).second) << oracle::signature(v) << " shares a site";
  }
}

TEST(CrashSites, OneSignatureNeverMapsToTwoSites) {
  // Details that are not part of the signature do not move a verdict to another site.
  const Verdict a{Stage::kCodegen, oracle::Arity{"tvmgen_default_fused_add", oracle::CalleeKind::kKernel, 3, 2,
                                                 oracle::ArityEvidence::kStatic}};
  const Verdict b{Stage::kCodegen, oracle::Arity{"tvmgen_default_fused_add_add", oracle::CalleeKind::kKernel, 5,
                                                 1, oracle::ArityEvidence::kDynamic}};
  ASSERT_EQ(oracle::signature(a), oracle::signature(b));
  EXPECT_EQ(crash_site_for(a), crash_site_for(b));
}

TEST(CrashSites, NonFindingsHaveNoSite) {
  EXPECT_EQ(crash_site_for({Stage::kRun, oracle::Pass{}}), CrashSite::kCount);
  EXPECT_EQ(crash_site_for({Stage::kAnnotated, oracle::InvalidInput{"x"}}), CrashSite::kCount);
  EXPECT_EQ(crash_site_for({Stage::kRun, oracle::ToolchainError{"x"}}), CrashSite::kCount);
}

TEST(CrashSites, TheTableHasOneDistinctFunctionPerRow) {
  std::set<std::string_view> names;
  std::set<void (*)(const std::string&)> functions;
  for (const auto& row : crash_site_table()) {
    EXPECT_TRUE(names.insert(row.name).second) << row.name;
    EXPECT_TRUE(functions.insert(row.abort).second) << row.name;
    EXPECT_EQ(row.name.rfind("crash_on_", 0), 0u) << row.name;
    EXPECT_FALSE(row.description.empty());
  }
  EXPECT_EQ(crash_site_table().size(), static_cast<std::size_t>(CrashSite::kCount));
}

// ClusterFuzz users read the bucket names in docs/libfuzzer.md; `prefix_{a,b}` there names
// prefix_a and prefix_b.
TEST(CrashSites, TheLibfuzzerDocNamesEverySite) {
  const std::string doc = test_support::read_text(test_support::source_path("docs/libfuzzer.md"));
  std::set<std::string> named;
  const std::regex site(R"(`(crash_on_[a-z_]*)(\{([a-z_,]+)\})?`)");
  for (auto it = std::sregex_iterator(doc.begin(), doc.end(), site); it != std::sregex_iterator();
       ++it) {
    if (!(*it)[3].matched) {
      named.insert((*it)[1]);
      continue;
    }
    std::stringstream alternatives((*it)[3]);
    for (std::string a; std::getline(alternatives, a, ',');) named.insert((*it)[1].str() + a);
  }
  for (const auto& row : crash_site_table()) {
    EXPECT_TRUE(named.count(std::string(row.name))) << row.name << " is not in docs/libfuzzer.md";
  }
}

TEST(CrashSitesDeathTest, ReportFindingAbortsNamingTheSiteAndTheSignature) {
  const Verdict v{Stage::kCodegen,
                  oracle::Arity{"tvmgen_default_fused_add", oracle::CalleeKind::kKernel, 3, 2,
                                oracle::ArityEvidence::kStatic}};
  EXPECT_DEATH(fuzz::targets::report_finding(v, "the context"),
               "crash_on_arity_mismatch_kernel(.|\n)*arity:codegen:kernel(.|\n)*the context");
}

}  // namespace
}  // namespace aotfuzz
