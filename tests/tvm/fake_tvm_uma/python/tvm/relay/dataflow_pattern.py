# The fake dataflow patterns: UMA's pattern registration takes them, nothing matches them.
def is_op(name):
    return lambda *args: ("is_op", name, args)


def wildcard():
    return ("wildcard",)
