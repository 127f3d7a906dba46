# The fake Target of the fake TVM with UMA: a kind name, listed kinds (see tvm/__init__.py).
import tvm


class Target:
    def __init__(self, kind, host=None):
        if kind not in Target.list_kinds():
            raise ValueError("Target kind \"%s\" is not defined" % kind)
        self.kind = kind

    def __repr__(self):
        return self.kind

    @staticmethod
    def list_kinds():
        return ["c", "llvm"] + tvm.uma_registrations
