def compiler_begin(expr, compiler):
    return ("begin", expr, compiler)


def compiler_end(expr, compiler):
    return ("end", expr, compiler)
