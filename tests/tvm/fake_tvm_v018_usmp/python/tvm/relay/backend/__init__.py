# The v0.9+ build options of the fake TVM v0.18 with USMP (see tvm/__init__.py): as
# tests/tvm/fake_tvm_v018's, and the aot executor's registered options.


class Executor:
    def __init__(self, name, options=None):
        self.name, self.options = name, dict(options or {})

    def __repr__(self):
        return "Executor(%s, %s)" % (self.name, sorted(self.options.items()))

    @staticmethod
    def list_registered_options(name):
        return {
            "link-params": "IntImm",
            "unpacked-api": "IntImm",
            "interface-api": "runtime.String",
            "workspace-byte-alignment": "IntImm",
            "constant-byte-alignment": "IntImm",
        }


class Runtime:
    def __init__(self, name, options=None):
        self.name = name

    def __repr__(self):
        return "Runtime(%s)" % self.name
