# Storage planning and C code generation tests (included from tests/aot/CMakeLists.txt). The
# end-to-end tests compile generated C with tcc, gcc and clang, so they also need the oracle.
aotfuzz_test(aot_codegen_tests LABEL unit
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/storage_plan_test.cc ${CMAKE_CURRENT_LIST_DIR}/codegen_test.cc
  LIBS aotfuzz_aot aotfuzz_oracle aotfuzz_reference)
