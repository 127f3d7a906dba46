// What the runtime header and the generated C take from the C library, declared as glibc does on
// LP64 targets. The runner compiles each batch of cases apart from the runtime, and reading no
// system header is most of what a small batch's compile would otherwise cost; this text heads
// harness_case_prelude_c (oracle/harness.cc). executor_test.cc compiles it together with the
// real headers, where any declaration that differs from glibc's is a conflicting type.
// Compiled into aotfuzz by cmake/embed_text.cmake, without these // lines.

typedef __SIZE_TYPE__ size_t;
typedef signed char int8_t;
typedef short int int16_t;
typedef int int32_t;
typedef long int int64_t;
typedef unsigned char uint8_t;
typedef unsigned short int uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long int uint64_t;
typedef unsigned long int uintptr_t;
#ifndef NULL
#define NULL ((void*)0)
#endif
typedef struct _IO_FILE FILE;
extern int fprintf(FILE* __restrict __stream, const char* __restrict __format, ...);
extern int fflush(FILE* __stream);
extern void* memset(void* __s, int __c, size_t __n);
extern void* memcpy(void* __restrict __dest, const void* __restrict __src, size_t __n);
