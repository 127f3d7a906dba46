# The v0.9+ build options of the fake TVM v0.18 (see tvm/__init__.py).


class Executor:
    def __init__(self, name, options=None):
        self.name, self.options = name, dict(options or {})

    def __repr__(self):
        return "Executor(%s, %s)" % (self.name, sorted(self.options.items()))


class Runtime:
    def __init__(self, name, options=None):
        self.name = name

    def __repr__(self):
        return "Runtime(%s)" % self.name
