# A stand-in for Apache TVM v0.20 and later, which has no Relay: the driver refuses it with one
# line naming the releases it supports (tests/tvm/case_flow_test.cc).
__version__ = "0.20.fake"
