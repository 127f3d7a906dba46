// The top of every harness main.c of the builtin pipeline, of a foreign system's shared harness
// file (TVM's aotfuzz_harness.c) and of the runner's shared runtime. _GNU_SOURCE comes first
// because the programs are compiled with -std=c99, which hides the POSIX and Linux declarations
// the runtime uses (sigaction, MAP_ANONYMOUS, mremap).
// oracle/harness.cc puts the runtime header's #include (or TVM's headers) after it.
// Compiled into aotfuzz by cmake/embed_text.cmake, without these // lines.

#define _GNU_SOURCE
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
