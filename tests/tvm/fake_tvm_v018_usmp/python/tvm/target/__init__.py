# The fake TVM v0.18's tvm.target (see ../__init__.py).


class Target:
    def __init__(self, target, host=None):
        self.kind = target

    def __repr__(self):
        return self.kind
