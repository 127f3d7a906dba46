# A TVM installation whose import fails, as one with a libtvm.so of another build does
# (tests/tvm/case_flow_test.cc).
raise ImportError("fake TVM: cannot load libtvm.so")
