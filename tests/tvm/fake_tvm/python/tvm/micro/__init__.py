def get_standalone_crt_dir():
    return "/nonexistent/standalone_crt"


def export_model_library_format(factory, path):
    raise RuntimeError("fake TVM exports nothing")
