from . import annotation  # noqa: F401
