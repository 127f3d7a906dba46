# Harness and static-arity tests (included from tests/oracle/CMakeLists.txt): generated models run
# under the harness, bug switches caught by its checks, and the report and arity parsers.
aotfuzz_test(oracle_harness_tests LABEL unit
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/harness_test.cc ${CMAKE_CURRENT_LIST_DIR}/harness_static_arity_test.cc
  LIBS aotfuzz_oracle aotfuzz_aot aotfuzz_reference)
aotfuzz_test(oracle_harness_property_tests LABEL property
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/harness_property_test.cc
  LIBS aotfuzz_oracle aotfuzz_aot aotfuzz_reference aotfuzz_generator)
