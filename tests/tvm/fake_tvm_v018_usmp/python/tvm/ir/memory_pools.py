# The memory pools of TVM v0.10 on, as the driver builds and reads them (see ../__init__.py).


class PoolInfo:
    def __init__(self, pool_name, targets, is_internal=False):
        self.pool_name, self.targets, self.is_internal = pool_name, targets, is_internal

    def same_as(self, other):
        return self is other


class WorkspacePoolInfo(PoolInfo):
    pass


class ConstantPoolInfo(PoolInfo):
    def __init__(self, pool_name, targets, constant_info_array=None):
        super().__init__(pool_name, targets)


class WorkspaceMemoryPools:
    def __init__(self, pools):
        self.pools = pools


class ConstantMemoryPools:
    def __init__(self, pools):
        self.pools = pools


class AllocatedPoolInfo:
    def __init__(self, pool_info, allocated_size):
        self.pool_info, self.allocated_size = pool_info, allocated_size
