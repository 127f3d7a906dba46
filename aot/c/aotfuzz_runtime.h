// The C runtime interface of the code the pipeline under test emits and of the harnesses that
// run it: aot/runtime_header.cc writes this text as aotfuzz_runtime.h next to every generated
// module. Values follow TVM v0.8 (include/tvm/runtime/c_runtime_api.h) and DLPack v0.6 so that
// emitted code reads like TVM's. Kept to C99 so that tcc, gcc and clang accept it with -pedantic
// -Werror (tests/oracle/runtime_header_test.cc).
// Compiled into aotfuzz by cmake/embed_text.cmake, without these // lines.

/* aotfuzz_runtime.h: C runtime interface for code emitted by aotfuzz (C99). */
#ifndef AOTFUZZ_RUNTIME_H_
#define AOTFUZZ_RUNTIME_H_

#include <stddef.h>
#include <stdint.h>
#ifdef AOTFUZZ_TRACE
#include <stdio.h>
#include <string.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Device types (DLPack). Only the CPU is used. */
typedef enum {
  kDLCPU = 1
} DLDeviceType;

/* Element type codes of DLDataType (DLPack). */
typedef enum {
  kDLInt = 0,
  kDLUInt = 1,
  kDLFloat = 2,
  kDLBfloat = 4
} DLDataTypeCode;

/* Type codes of packed-function arguments (TVM). */
typedef enum {
  kTVMArgInt = 0,
  kTVMArgFloat = 2,
  kTVMOpaqueHandle = 3,
  kTVMNullptr = 4,
  kTVMDataType = 5,
  kDLDevice = 6,
  kTVMDLTensorHandle = 7,
  kTVMObjectHandle = 8,
  kTVMModuleHandle = 9,
  kTVMPackedFuncHandle = 10,
  kTVMStr = 11,
  kTVMBytes = 12,
  kTVMNDArrayHandle = 13
} TVMArgTypeCode;

typedef struct {
  DLDeviceType device_type;
  int32_t device_id;
} DLDevice;

typedef struct {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
} DLDataType;

typedef struct {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;
  uint64_t byte_offset;
} DLTensor;

typedef union {
  int64_t v_int64;
  double v_float64;
  void* v_handle;
  const char* v_str;
  DLDataType v_type;
  DLDevice v_device;
} TVMValue;

/* The packed calling convention: arguments and their type codes, the argument count, the return
   value and its type code, and an opaque resource handle. Returns 0 on success. */
typedef int32_t (*TVMBackendPackedCFunc)(TVMValue* args, int* type_codes, int num_args,
                                         TVMValue* ret, int* ret_code, void* resource);

/* Call trace: AOTFUZZ_TRACE_CALL(name, num_args) at the start of every packed function records
   "<name> <num_args>" on its own line, so the oracle can compare the dynamic call arity with the
   IR. The harness defines the stream with AOTFUZZ_DEFINE_TRACE_FILE; and opens it. */
#ifdef AOTFUZZ_TRACE
extern FILE* aotfuzz_trace_file;
#define AOTFUZZ_DEFINE_TRACE_FILE FILE* aotfuzz_trace_file = NULL
#define AOTFUZZ_TRACE_CALL(name, num_args)                                           \
  do {                                                                               \
    if (aotfuzz_trace_file != NULL) {                                                \
      fprintf(aotfuzz_trace_file, "%s %d\n", (const char*)(name), (int)(num_args)); \
      fflush(aotfuzz_trace_file);                                                    \
    }                                                                                \
  } while (0)
#else
#define AOTFUZZ_DEFINE_TRACE_FILE extern int aotfuzz_trace_disabled_
#define AOTFUZZ_TRACE_CALL(name, num_args) ((void)(num_args))
#endif

/* The workspace of the executor's intermediates comes from the application, as TVM's generated
   code gets it from the C runtime: <MOD>_WORKSPACE_SIZE bytes, asked for at the start of a run
   and given back at its end. */
void* TVMBackendAllocWorkspace(int device_type, int device_id, uint64_t nbytes,
                               int dtype_code_hint, int dtype_bits_hint);
int TVMBackendFreeWorkspace(int device_type, int device_id, void* ptr);

/* Instrumentation for the harness (with AOTFUZZ_TRACE; no-ops otherwise).
   AOTFUZZ_FAULT_POINT() opens every function the executor calls: it counts the calls in
   aotfuzz_fault_points and, when aotfuzz_fault_countdown reaches zero, makes that call fail, so
   that the harness can check that a failure reaches the caller of the entry point.
   AOTFUZZ_POISON(p, n) fills the executor's stack descriptors before use, so that a field nobody
   set reads as garbage instead of whatever a previous call left.
   AOTFUZZ_ARG_ERROR(name, k) reports the argument a kernel's checks refused. */
#ifdef AOTFUZZ_TRACE
extern int aotfuzz_fault_points;
extern int aotfuzz_fault_countdown;
#define AOTFUZZ_DEFINE_FAULTS int aotfuzz_fault_points = 0; int aotfuzz_fault_countdown = 0
#define AOTFUZZ_FAULT_POINT()                                                 \
  do {                                                                        \
    ++aotfuzz_fault_points;                                                   \
    if (aotfuzz_fault_countdown > 0 && --aotfuzz_fault_countdown == 0) return -1; \
  } while (0)
#define AOTFUZZ_POISON(p, n) memset((p), 0xA5, (n))
#define AOTFUZZ_ARG_ERROR(name, k)                                                     \
  do {                                                                                 \
    if (aotfuzz_trace_file != NULL) {                                                  \
      fprintf(aotfuzz_trace_file, "AOTFUZZ arg-error %s %d\n", (const char*)(name), (int)(k)); \
      fflush(aotfuzz_trace_file);                                                      \
    }                                                                                  \
  } while (0)
#else
#define AOTFUZZ_DEFINE_FAULTS extern int aotfuzz_faults_disabled_
#define AOTFUZZ_FAULT_POINT() ((void)0)
#define AOTFUZZ_POISON(p, n) ((void)(p), (void)(n))
#define AOTFUZZ_ARG_ERROR(name, k) ((void)(k))
#endif

#ifdef __cplusplus
}
#endif

#endif /* AOTFUZZ_RUNTIME_H_ */
