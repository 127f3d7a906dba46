#include "reference/user_functions.h"

#include "reference/tvm_passes.h"

#include <pthread.h>

#include <exception>
#include <stdexcept>
#include <string>

namespace aotfuzz::reference {

bool is_user_function(const ir::FunctionNode& fn) {
  return !fn.attrs().has("Compiler") && !fn.attrs().has("Primitive");
}

ir::Module map_user_functions(
    const ir::Module& module,
    const std::function<ir::Expr(const std::string&, const ir::Function&)>& body_of) {
  ir::Module out;
  for (const auto& [name, fn] : module.functions()) {
    if (!is_user_function(*fn)) {
      out.add(name, fn);
      continue;
    }
    ir::Expr body = body_of(name, fn);
    out.add(name, body == fn->body() ? fn : ir::FunctionNode::make(fn->params(), body, fn->attrs()));
  }
  return out;
}

namespace {

// Graphs this small fit any thread's stack (a few frames of a few hundred bytes per node).
constexpr std::size_t kInPlaceNodes = 2000;
// AddressSanitizer's frames are several times larger.
#if defined(__SANITIZE_ADDRESS__)
constexpr std::size_t kStackBytesPerNode = 16384;
#else
constexpr std::size_t kStackBytesPerNode = 4096;
#endif

struct Job {
  const std::function<void()>* work;
  std::exception_ptr error;
};

void* run_job(void* arg) {
  auto* job = static_cast<Job*>(arg);
  try {
    (*job->work)();
  } catch (...) {
    job->error = std::current_exception();
  }
  return nullptr;
}

}  // namespace

void with_stack_for(std::size_t nodes, const std::function<void()>& work) {
  if (nodes > kMaxReferenceNodes) {
    throw std::length_error("the reference passes take graphs of at most " +
                            std::to_string(kMaxReferenceNodes) + " nodes, this one has " +
                            std::to_string(nodes));
  }
  if (nodes <= kInPlaceNodes) {
    work();
    return;
  }
  Job job{&work, nullptr};
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  // Reserved address space only: pages are touched as deep as the walk goes.
  pthread_attr_setstacksize(&attr, (1u << 20) + nodes * kStackBytesPerNode);
  pthread_t thread;
  const int rc = pthread_create(&thread, &attr, run_job, &job);
  pthread_attr_destroy(&attr);
  if (rc != 0) throw std::runtime_error("cannot start a thread for the reference passes");
  pthread_join(thread, nullptr);
  if (job.error) std::rethrow_exception(job.error);
}

}  // namespace aotfuzz::reference
