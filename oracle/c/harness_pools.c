// The memory pools a foreign system's generated C leaves to the application (TVM's external
// USMP pools), for the shared part of its harness: each pool is its own slot, at least as
// aligned as asked (the slot's start is page-aligned, the pool starts `alignment`-rounded below
// the slot's end), ending before a PROT_NONE guard page like every other buffer, and filled with
// 0xCD before each run as TVM's platform fills its workspace, so that reading pool bytes nobody
// wrote shows. A case's run_once asks for its pools before each call of the entry point.
// Spliced after harness_runtime.c, whose slots, reserve() and pool_guard it uses.
// Compiled into aotfuzz by cmake/embed_text.cmake, without these // lines.

static struct aotfuzz_slot pool_slots[AOTFUZZ_MAX_POOLS];

uint8_t* aotfuzz_harness_pool(int k, size_t size, size_t alignment) {
  struct aotfuzz_slot* s;
  size_t rounded;
  size_t span;
  if (k < 0 || k >= AOTFUZZ_MAX_POOLS || alignment == 0 || alignment > page_size ||
      (alignment & (alignment - 1)) != 0) {
    harness_fail("pool");
  }
  s = &pool_slots[k];
  rounded = (size + alignment - 1) / alignment * alignment;
  span = span_of(rounded);
  if (s->span < span) {
    if (s->span != 0) munmap(s->view, s->span + page_size);
    s->view = reserve(span);
    if (mprotect(s->view, span, PROT_READ | PROT_WRITE) != 0) harness_fail("mprotect");
    s->span = span;
  }
  memset(s->view, 0xCD, s->span);
  pool_guard[k] = (uintptr_t)(s->view + s->span);
  return s->view + s->span - rounded;
}
