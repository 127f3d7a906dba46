// `aotfuzz compile FILE`: run the pipeline and print a stage (Relay text) or write the C sources.
#include <filesystem>
#include <fstream>
#include <iostream>

#include "aot/codegen.h"
#include "aot/pass_error.h"
#include "aot/pipeline.h"
#include "cli/common.h"
#include "ir/printer.h"

namespace aotfuzz::cli {

Command register_compile(CLI::App& parent) {
  struct Opts {
    std::string file;
    PipelineFlags flags;
    std::string emit = "fused";
    std::string out;
    bool types = false;
  };
  auto opts = std::make_shared<Opts>();
  Command c;
  c.app = parent.add_subcommand("compile", "Run the pipeline; print a stage or write C");
  c.app->add_option("FILE", opts->file, "Annotated Relay text file")->required();
  add_pipeline_flags(c.app, opts->flags, oracle::kCompile);
  std::vector<std::string> emits(aot::module_stage_names().begin(),
                                 aot::module_stage_names().end());
  emits.emplace_back("c");
  c.app->add_option("--emit", opts->emit, "What to output")->check(CLI::IsMember(emits));
  c.app->add_option("--out", opts->out, "Directory to write into: the C files, or <stage>.relay (default: print to stdout)");
  c.app->add_flag("--types", opts->types, "Print /* ty=... */ comments");
  c.run = [opts] {
    ir::Module m = load_module(opts->file);
    oracle::CaseOptions co = case_options(opts->flags);
    if (auto why = reference::over_memory_budget(m, co.memory_budget)) {
      throw CommandError(kBadInput, opts->file + ": " + *why);
    }
    aot::Stages stages;
    try {
      stages = aot::run_passes(m, co.aot);
    } catch (const aot::PassError& e) {
      throw CommandError(e.kind() == aot::PassError::Kind::kRejectedInput ? kBadInput : kInternal,
                         opts->file + ": " + e.what());
    } catch (const ir::Error& e) {
      throw CommandError(kInternal, opts->file + ": pipeline error: " + e.what());
    }
    if (opts->emit != "c") {
      ir::PrintOptions po;
      po.type_comments = opts->types;
      const std::string text = ir::print_module(*stages.find(opts->emit), po);
      if (opts->out.empty()) {
        std::cout << text;
        return kOk;
      }
      const auto path = std::filesystem::path(opts->out) / (opts->emit + ".relay");
      std::error_code ec;
      std::filesystem::create_directories(opts->out, ec);
      if (ec) throw CommandError(kBadInput, opts->out + ": " + ec.message());
      std::ofstream f(path, std::ios::binary);
      f << text;
      f.close();
      if (!f) throw CommandError(kInternal, path.string() + ": write failed");
      std::cerr << "wrote " << path.string() << "\n";
      return kOk;
    }
    aot::CSources src;
    try {
      src = aot::generate_c(stages.output(), co.aot);
    } catch (const ir::Error& e) {
      throw CommandError(kInternal, opts->file + ": codegen error: " + e.what());
    }
    if (opts->out.empty()) {
      for (const auto& [name, text] : src.files) std::cout << "// ---- " << name << "\n" << text;
      return kOk;
    }
    std::error_code ec;
    std::filesystem::create_directories(opts->out, ec);
    if (ec) throw CommandError(kBadInput, opts->out + ": " + ec.message());
    for (const auto& [name, text] : src.files) {
      std::ofstream f(std::filesystem::path(opts->out) / name, std::ios::binary);
      f << text;
      if (!f) throw CommandError(kInternal, opts->out + "/" + name + ": write failed");
      std::cerr << "wrote " << (std::filesystem::path(opts->out) / name).string() << "\n";
    }
    return kOk;
  };
  return c;
}

}  // namespace aotfuzz::cli
