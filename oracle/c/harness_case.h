// One case as the harness runtime (harness_runtime.c) sees it, so that one runtime serves a
// single program, a batch of many cases in one program, and the runner, which compiles the
// runtime once and each batch of cases apart: both of those translation units get this text
// (harness_runtime_c and harness_case_prelude_c in oracle/harness.cc), so they agree on the
// layout. The case code that harness_code_c generates fills one per case.
// Compiled into aotfuzz by cmake/embed_text.cmake, without these // lines.

struct aotfuzz_harness_case {
  int num_inputs;
  int num_outputs;
  const uint8_t* const* input_data;
  const size_t* input_size;
  const size_t* input_elem;
  const size_t* output_size;
  const size_t* output_elem;
  int32_t (*run_once)(uint8_t* const* input_buf, uint8_t* const* output_buf);
};
