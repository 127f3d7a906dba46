// aotfuzz-probe: a case's in-process steps (the reference, every pass, the C code) in a process
// of their own, so that a pass that crashes or hangs is a verdict of the caller rather than its
// end (oracle/in_process_probe.h). A new process, not a fork of the caller: a fork of a process
// with threads may inherit a lock another thread held (AddressSanitizer's allocator takes no
// care of fork), and the child would hang on it.
//
// usage: aotfuzz-probe --flags FLAGS --parent PID < module.relay
// Writes one byte per step entered (the Stage) to stdout, then, once the steps end, whatever their
// verdict, kProbeAnswerTag and what they prepared (encode_probe_answer), and exits 0; exits
// kProbeRefusedExit when it cannot read the case.
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <iterator>
#include <new>
#include <optional>
#include <string>

#include "ir/parser.h"
#include "oracle/case_flags.h"
#include "oracle/in_process_probe.h"

int main(int argc, char** argv) {
  using namespace aotfuzz;
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (argc != 5 || std::string(argv[1]) != "--flags" || std::string(argv[3]) != "--parent") {
    std::fprintf(stderr, "usage: aotfuzz-probe --flags FLAGS --parent PID < module.relay\n");
    ::_exit(oracle::kProbeRefusedExit);
  }
  // A parent gone before the death signal was armed: nobody waits for the steps.
  if (std::to_string(::getppid()) != argv[4]) ::_exit(0);
  // A crash is the caller's verdict by its signal: no sanitizer report in its place.
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS}) {
    std::signal(sig, SIG_DFL);
  }
  std::signal(SIGINT, SIG_IGN);
  std::signal(SIGTERM, SIG_IGN);
  std::signal(SIGPIPE, SIG_IGN);
  // In a process group of its own, a write to the terminal must not stop it.
  std::signal(SIGTTOU, SIG_IGN);
  oracle::CaseOptions options;
  ir::Module module;
  try {
    options = oracle::parse_case_flags(argv[2]);
    const std::string text(std::istreambuf_iterator<char>(std::cin), {});
    module = ir::parse_module(text, "<stdin>");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "aotfuzz-probe: %s\n", e.what());
    ::_exit(oracle::kProbeRefusedExit);
  }
  const oracle::StageMark mark = [](oracle::Stage stage) {
    const auto byte = static_cast<unsigned char>(stage);
    while (::write(1, &byte, 1) < 0 && errno == EINTR) {
    }
  };
  // Another exception of the steps escapes as it escaped the campaign's process that took the
  // case down: std::terminate, SIGABRT, a crash of the stage marked last. Running out of memory is
  // the environment's failure, never the pipeline's: no answer, and the caller prepares the case.
  oracle::CaseResult r;
  std::optional<oracle::PreparedCase> prepared;
  try {
    prepared = oracle::probe_steps(module, options, mark, r);
  } catch (const std::bad_alloc&) {
    ::_exit(0);
  }
  // The steps are done: a failure to write their answer down is no crash of theirs, and the
  // caller, left without an answer, prepares the case itself.
  std::string answer;
  try {
    answer = oracle::encode_probe_answer(r, prepared, oracle::prepare_work());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "aotfuzz-probe: no answer: %s\n", e.what());
    ::_exit(0);
  }
  answer.insert(answer.begin(), static_cast<char>(oracle::kProbeAnswerTag));
  for (std::size_t done = 0; done < answer.size();) {
    const ssize_t w = ::write(1, answer.data() + done, answer.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) break;  // the caller is gone
    done += static_cast<std::size_t>(w);
  }
  // Without the exit-time work (a leak check, destructors): the steps' outcome is all that counts.
  ::_exit(0);
}
