# The fake TVM v0.18's tvm.ir (see ../__init__.py): its memory pools.
from . import memory_pools  # noqa: F401
