# Records the fixture of the fake TVM v0.18 with USMP (fixture/, see fixture/README) from a real
# TVM: runs tvm/driver.py on the seed graph (corpus/seed/tvm_9036_annotated.relay) as
# `aotfuzz run SEED --sut tvm --merge --usmp on --pools external --api unpacked --interface c`
# asks it, and writes what TVM answered.
#   python3 tests/tvm/fake_tvm_v018_usmp/capture.py TVM_HOME
import json
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.join(here, "..", "..", "..")
fixture = os.path.join(here, "fixture")

tensor = {"shape": [10, 10], "dtype": "float32"}
graph = {
    "params": [dict(tensor, name=n) for n in ("x", "w0", "w1")],
    "nodes": [
        {"kind": "param", "index": 0},
        {"kind": "param", "index": 1},
        {"kind": "param", "index": 2},
        {"kind": "call", "op": "annotation.compiler_begin", "args": [0], "compiler": "ccompiler"},
        {"kind": "call", "op": "annotation.compiler_begin", "args": [1], "compiler": "ccompiler"},
        {"kind": "call", "op": "add", "args": [3, 4]},
        {"kind": "call", "op": "annotation.compiler_end", "args": [5], "compiler": "ccompiler"},
        {"kind": "call", "op": "annotation.compiler_begin", "args": [6], "compiler": "ccompiler"},
        {"kind": "call", "op": "annotation.compiler_begin", "args": [2], "compiler": "ccompiler"},
        {"kind": "call", "op": "add", "args": [7, 8]},
        {"kind": "call", "op": "annotation.compiler_end", "args": [9], "compiler": "ccompiler"},
        {"kind": "call", "op": "add", "args": [6, 10]},
    ],
    "result": 11,
}
request = {
    "graph": graph,
    "merge": True,
    "mod_name": "default",
    "api": "unpacked",
    "interface": "c",
    "memory": {
        "usmp": True,
        "algorithm": "greedy_by_conflicts",
        "pools": "external",
        "workspace_io": False,
        "workspace_alignment": 8,
        "constant_alignment": 16,
        "link_params": True,
        "debug_overlap": False,
    },
}
with open(os.path.join(root, "tvm", "driver.py")) as f:
    driver = f.read()
proc = subprocess.run(
    [sys.executable, "-c", driver, sys.argv[1]],
    input=json.dumps(request) + "\n",
    capture_output=True,
    text=True,
    check=True,
)
answer = [json.loads(line) for line in proc.stdout.splitlines()][-1]
if not answer.get("ok"):
    sys.exit("TVM failed: %s" % answer)
os.makedirs(os.path.join(fixture, "mlf", "codegen", "host", "src"), exist_ok=True)
os.makedirs(os.path.join(fixture, "mlf", "codegen", "host", "include"), exist_ok=True)
for name, text in answer["files"]:
    if name in ("crt_config.h", "crt_backend_api.c"):
        continue
    sub = "include" if name.endswith(".h") else "src"
    with open(os.path.join(fixture, "mlf", "codegen", "host", sub, name), "w") as f:
        f.write(text)
with open(os.path.join(fixture, "mlf", "metadata.json"), "w") as f:
    f.write(answer["metadata"])
with open(os.path.join(fixture, "plan.json"), "w") as f:
    json.dump(answer["plan"], f, indent=1)
    f.write("\n")
with open(os.path.join(fixture, "partitioned.relay"), "w") as f:
    f.write(answer["partitioned"])
