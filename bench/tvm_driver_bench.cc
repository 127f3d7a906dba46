// The cost of a case with --sut tvm, split into TVM's own work and the driver's: generated graphs
// sent one after another to one TVM driver (tvm/driver.h), as a campaign worker sends them.
//
//   tvm_driver_bench TVM_HOME [CASES] [SEED]
//
// Prints the import time, then medians per case of the whole request, of TVM's partitioning
// (graph construction, InferType, MergeCompilerRegions, PartitionGraph), relay.build and the
// Model Library Format export as the driver timed them, and of the rest (the driver's own cost:
// JSON both ways, the pipe, the graph construction's Python side). Without a C compiler or run:
// `aotfuzz fuzz --sut tvm --jobs 1` gives the cases per second per core of the whole flow.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "generator/builder.h"
#include "generator/policy.h"
#include "ir/rng.h"
#include "tvm/case_flow.h"
#include "tvm/driver.h"

namespace {

using aotfuzz::tvm::TvmBuild;

double median_ms(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: tvm_driver_bench TVM_HOME [CASES] [SEED]\n");
    return 2;
  }
  const int cases = argc > 2 ? std::atoi(argv[2]) : 50;
  const std::uint64_t seed = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 1;
  aotfuzz::tvm::TvmDriverOptions o;
  o.home = argv[1];
  aotfuzz::tvm::TvmDriver driver(o);
  const auto t0 = std::chrono::steady_clock::now();
  const std::string version = driver.tvm_version();
  const double import_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (version.empty()) {
    std::fprintf(stderr, "tvm_driver_bench: TVM does not start from %s\n", argv[1]);
    return 3;
  }
  aotfuzz::generator::GenPolicy policy;
  policy.dtypes = {{"float32", 8}, {"int32", 1}};
  aotfuzz::ir::Rng rng(seed);
  std::vector<double> total, partition, build, exporting, driver_own;
  int ok = 0, failed = 0;
  for (int i = 0; i < cases; ++i) {
    const auto graph =
        aotfuzz::tvm::flatten_tuple_params(aotfuzz::generator::generate(policy, rng));
    const nlohmann::json request = {{"graph", aotfuzz::tvm::tvm_graph_json(graph.main())},
                                    {"merge", i % 2 == 0},
                                    {"mod_name", "bench"},
                                    {"api", "packed"},
                                    {"interface", "packed"}};
    const TvmBuild b = driver.build(request);
    if (b.status != TvmBuild::Status::kOk) {
      ++failed;
      continue;
    }
    ++ok;
    auto ms = [](std::chrono::microseconds us) { return static_cast<double>(us.count()) / 1000; };
    total.push_back(ms(b.elapsed));
    partition.push_back(ms(b.partition_time));
    build.push_back(ms(b.build_time));
    exporting.push_back(ms(b.export_time));
    driver_own.push_back(ms(b.elapsed - b.partition_time - b.build_time - b.export_time));
  }
  std::printf("tvm %s, seed %llu: %d cases compiled, %d refused or failed; import %.0f ms\n",
              version.c_str(), static_cast<unsigned long long>(seed), ok, failed, import_ms);
  std::printf(
      "median per case: request %.1f ms = partition %.1f + relay.build %.1f + export %.1f"
      " + driver %.1f ms\n",
      median_ms(total), median_ms(partition), median_ms(build), median_ms(exporting),
      median_ms(driver_own));
  std::printf("driver's own cost / relay.build: %.3f\n",
              median_ms(build) > 0 ? median_ms(driver_own) / median_ms(build) : 0.0);
  return 0;
}
