# The fake UMA (python/tvm/relay/backend/contrib/uma/backend.py): register() registers the
# target kind once, as TVM's does, which refuses a second registration of one kind.
import tvm


class UMABackend:
    def __init__(self, merge_compiler_regions=True):
        self.patterns = []

    def _register_pattern(self, name, pattern, predicate=None):
        self.patterns.append((self.target_name + "." + name, pattern))

    def register(self):
        if self.target_name in tvm.target.Target.list_kinds():
            return  # UMABackend.register skips a kind that exists
        if self.target_name in tvm.uma_registrations:
            raise tvm.TVMError("TVM UMA Error: Target is already registered: " + self.target_name)
        tvm.uma_registrations.append(self.target_name)
