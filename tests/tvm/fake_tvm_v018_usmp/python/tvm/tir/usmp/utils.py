# USMP's BufferInfo and PoolAllocation, as the driver's recorder reads and makes them.


class BufferInfo:
    def __init__(self, name_hint, size_bytes, pool_candidates, alignment=None):
        self.name_hint, self.size_bytes = name_hint, size_bytes
        self.pool_candidates, self.alignment = pool_candidates, alignment
        self.conflicts = []

    def same_as(self, other):
        return self is other


class PoolAllocation:
    def __init__(self, pool_info, byte_offset):
        self.pool_info, self.byte_offset = pool_info, byte_offset
