# The fake TVM v0.18's tvm.tir (see ../__init__.py): USMP's types.
from . import usmp  # noqa: F401
