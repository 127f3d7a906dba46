// The crash sites and the verdict dispatch. Each site's body differs (its own name and meaning),
// so identical-code folding cannot merge two of them either.
#include "fuzz/targets/crash_sites.h"

#include <cstdio>
#include <cstdlib>

// Keep every site as its own frame: no inlining, and no tail call that would replace it.
#if defined(__clang__)
#define AOTFUZZ_SITE_ATTRS __attribute__((noinline, disable_tail_calls))
#elif defined(__GNUC__)
#define AOTFUZZ_SITE_ATTRS __attribute__((noinline, optimize("no-optimize-sibling-calls")))
#else
#define AOTFUZZ_SITE_ATTRS
#endif

namespace aotfuzz::fuzz::targets {
namespace {

void print_report(const char* site, const char* description, const std::string& report) {
  std::fprintf(stderr, "==aotfuzz== finding: %s (%s)\n%s\n", site, description, report.c_str());
  std::fflush(stderr);
}

}  // namespace

#define AOTFUZZ_CRASH_SITE(function, description)               \
  AOTFUZZ_SITE_ATTRS void function(const std::string& report) { \
    print_report(#function, description, report);               \
    std::abort();                                               \
  }
#include "fuzz/targets/crash_sites.def"
#undef AOTFUZZ_CRASH_SITE

const std::vector<CrashSiteInfo>& crash_site_table() {
  static const std::vector<CrashSiteInfo> kTable = {
#define AOTFUZZ_CRASH_SITE(function, description) \
  {CrashSite::function, #function, description, &function},
#include "fuzz/targets/crash_sites.def"
#undef AOTFUZZ_CRASH_SITE
  };
  return kTable;
}

CrashSite crash_site_for(const oracle::Verdict& verdict) {
  using oracle::Stage;
  using oracle::VerdictKind;
  auto by_callee = [](const std::optional<oracle::CalleeKind>& kind, CrashSite kernel,
                      CrashSite external, CrashSite other) {
    if (kind == oracle::CalleeKind::kKernel) return kernel;
    // A hook-lowered region is an external function of the builtin pipeline's all the same.
    if (kind == oracle::CalleeKind::kExternal || kind == oracle::CalleeKind::kHookLowered) {
      return external;
    }
    return other;
  };
  switch (verdict.kind()) {
    case VerdictKind::kMismatch:
      switch (verdict.stage) {
        case Stage::kMerge:
          return CrashSite::crash_on_stage_mismatch_merge;
        case Stage::kPartition:
          return CrashSite::crash_on_stage_mismatch_partition;
        case Stage::kFuse:
          return CrashSite::crash_on_stage_mismatch_fuse;
        default:
          return CrashSite::crash_on_output_mismatch_codegen;
      }
    case VerdictKind::kArity:
      return by_callee(std::get<oracle::Arity>(verdict.detail).callee_kind,
                       CrashSite::crash_on_arity_mismatch_kernel,
                       CrashSite::crash_on_arity_mismatch_external,
                       CrashSite::crash_on_arity_mismatch_other);
    case VerdictKind::kInputClobbered:
      return CrashSite::crash_on_input_clobbered;
    case VerdictKind::kOutputUnwritten:
      return CrashSite::crash_on_output_unwritten;
    case VerdictKind::kCrash:
      return by_callee(std::get<oracle::Crash>(verdict.detail).callee_kind,
                       CrashSite::crash_on_run_crash_kernel, CrashSite::crash_on_run_crash_external,
                       CrashSite::crash_on_run_crash_other);
    case VerdictKind::kTimeout:
      return CrashSite::crash_on_run_timeout;
    case VerdictKind::kCompileError:
      return CrashSite::crash_on_compile_error;
    case VerdictKind::kPipelineError:
      switch (verdict.stage) {
        case Stage::kAnnotated:
        case Stage::kMerge:
          return CrashSite::crash_on_pipeline_error_merge;
        case Stage::kPartition:
          return CrashSite::crash_on_pipeline_error_partition;
        case Stage::kFuse:
          return CrashSite::crash_on_pipeline_error_fuse;
        case Stage::kRun:
          return CrashSite::crash_on_pipeline_error_run;
        // Codegen, and a pass without sites of its own (docs/adding-a-pass.md).
        default:
          return CrashSite::crash_on_pipeline_error_codegen;
      }
    case VerdictKind::kStructure:
      switch (verdict.stage) {
        case Stage::kMerge:
          return CrashSite::crash_on_structure_merge;
        case Stage::kPartition:
          return CrashSite::crash_on_structure_partition;
        // Fuse, and a pass without sites of its own (docs/adding-a-pass.md).
        default:
          return CrashSite::crash_on_structure_fuse;
      }
    case VerdictKind::kNondeterministic:
      return CrashSite::crash_on_nondeterministic_codegen;
    case VerdictKind::kErrorIgnored:
      return CrashSite::crash_on_error_ignored_codegen;
    case VerdictKind::kWorkspaceOversized:
      return CrashSite::crash_on_workspace_oversized_codegen;
    case VerdictKind::kPass:
    case VerdictKind::kKnown:
    case VerdictKind::kInvalidInput:
    case VerdictKind::kToolchainError:
    // The fuzz targets test the builtin pipeline only: no system under test reports these.
    case VerdictKind::kSutError:
    case VerdictKind::kSutCrash:
    case VerdictKind::kFidelity:
    case VerdictKind::kPoolOverlap:
    case VerdictKind::kPoolMisaligned:
    case VerdictKind::kPoolTooSmall:
    case VerdictKind::kPoolSizeDisagreement:
    case VerdictKind::kWorkspaceLeftover:
      break;
  }
  return CrashSite::kCount;
}

void report_finding(const oracle::Verdict& verdict, const std::string& context) {
  const CrashSite site = crash_site_for(verdict);
  const std::string report = "signature: " + oracle::signature(verdict) +
                             "\nsummary: " + oracle::summary(verdict) + "\n" + context;
  if (site == CrashSite::kCount) {
    // Not a finding: a caller bug, reported as such rather than silently dropped.
    crash_on_unexpected_exception("report_finding called with a non-finding verdict\n" + report);
  }
  crash_site_table()[static_cast<unsigned>(site)].abort(report);
  std::abort();  // not reached: every site aborts
}

}  // namespace aotfuzz::fuzz::targets
