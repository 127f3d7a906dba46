// The application's side of aotfuzz_runtime.h's workspace, for the builtin pipeline's programs
// (TVM's get theirs from TVM's runtime, see oracle/tvm/platform.c): the bytes asked for end right
// before a guard page, filled with 0xCD, so that a storage plan too small for its intermediates
// faults and reading storage nobody wrote shows; one workspace at a time, as one executor run
// needs. Spliced after harness_runtime.c, whose slots, guard state and fault counters it uses.
// Compiled into aotfuzz by cmake/embed_text.cmake, without these // lines.

static struct aotfuzz_slot workspace_slot;
static void* workspace_given;

void* TVMBackendAllocWorkspace(int device_type, int device_id, uint64_t nbytes,
                               int dtype_code_hint, int dtype_bits_hint) {
  size_t size;
  size_t span;
  (void)device_type;
  (void)device_id;
  (void)dtype_code_hint;
  (void)dtype_bits_hint;
#ifdef AOTFUZZ_TRACE
  ++workspace_allocs;
  if (workspace_refused) return NULL;
#endif
  if (page_size == 0 || nbytes > (uint64_t)1 << 40) return NULL;
  size = (size_t)((nbytes + 7) / 8 * 8);
  span = span_of(size);
  if (workspace_slot.span < span) {
    if (workspace_slot.span != 0) munmap(workspace_slot.view, workspace_slot.span + page_size);
    workspace_slot.view = reserve(span);
    if (mprotect(workspace_slot.view, span, PROT_READ | PROT_WRITE) != 0) {
      harness_fail("mprotect");
    }
    workspace_slot.span = span;
  }
  memset(workspace_slot.view, 0xCD, workspace_slot.span);
  workspace_guard = (uintptr_t)(workspace_slot.view + workspace_slot.span);
  workspace_given = workspace_slot.view + workspace_slot.span - size;
  return workspace_given;
}

int TVMBackendFreeWorkspace(int device_type, int device_id, void* ptr) {
  (void)device_type;
  (void)device_id;
  if (ptr == NULL || ptr != workspace_given) return -1;
  workspace_given = NULL;
  return 0;
}
