// The platform layer that TVM's standalone C runtime leaves to the application, for the programs
// of `--sut tvm`: as TVM's AoT tests define it in their main.c, with the heap instead of a stack
// allocator, and memory filled with 0xCD so that reading storage nobody wrote shows.
// tvm_harness_support_c (tvm/harness.cc) splices it after TVM's runtime headers; only TVM's
// programs use it.
// Compiled into aotfuzz by cmake/embed_text.cmake, without these // lines.

tvm_crt_error_t TVMPlatformMemoryAllocate(size_t num_bytes, DLDevice dev, void** out_ptr) {
  (void)dev;
  *out_ptr = malloc(num_bytes == 0 ? 1 : num_bytes);
  if (*out_ptr == NULL) return kTvmErrorPlatformNoMemory;
  memset(*out_ptr, 0xCD, num_bytes);
  return kTvmErrorNoError;
}

tvm_crt_error_t TVMPlatformMemoryFree(void* ptr, DLDevice dev) {
  (void)dev;
  free(ptr);
  return kTvmErrorNoError;
}

void TVMPlatformAbort(tvm_crt_error_t code) {
  printf("AOTFUZZ tvm-abort %d\n", (int)code);
  fflush(stdout);
  abort();
}

void TVMLogf(const char* msg, ...) {
  va_list args;
  va_start(args, msg);
  vfprintf(stderr, msg, args);
  va_end(args);
}

int TVMFuncRegisterGlobal(const char* name, TVMFunctionHandle f, int override) {
  (void)name;
  (void)f;
  (void)override;
  return 0;
}

void TVMAPISetLastError(const char* msg) { fprintf(stderr, "TVMAPISetLastError: %s\n", msg); }
