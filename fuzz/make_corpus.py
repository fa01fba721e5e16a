#!/usr/bin/env python3
"""Writes the seed corpora of fuzz/corpus/ from the test data (maintainer
tool; the corpora are kept in the tree). Needs a built `tagflow` for the
binary seeds:

    python3 fuzz/make_corpus.py [build/tools/tagflow]

import_text    every .pbtxt under tests/data and examples/ up to 128 KB
import_binary  every .pb under tests/data, the text seeds converted to .pb,
               and a few wrapped in a MetaGraphDef and a SavedModel
config         configs/*.ini, tests/data/configs/*.ini and hand-written ones
run            programs for run_program.hpp, and small graphs of the test
               data in the GraphDef mode (byte 0 bit 7)
Duplicates (same bytes) are written once.
"""
import hashlib
import pathlib
import random
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "fuzz" / "corpus"
MAX_SEED = 128 * 1024


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field(number, payload):  # a length-delimited field
    return varint(number << 3 | 2) + varint(len(payload)) + payload


class Corpus:
    def __init__(self, target):
        self.dir = OUT / target
        self.dir.mkdir(parents=True, exist_ok=True)
        self.seen = set()
        for old in self.dir.iterdir():
            # Inputs of past findings (regression_*) stay: they are not made here.
            if old.name.startswith("regression_"):
                self.seen.add(hashlib.sha1(old.read_bytes()).hexdigest())
            else:
                old.unlink()

    def add(self, name, data):
        digest = hashlib.sha1(data).hexdigest()
        if digest in self.seen or len(data) > MAX_SEED:
            return
        self.seen.add(digest)
        (self.dir / name).write_bytes(data)


def text_graphs():
    files = sorted((ROOT / "tests" / "data").rglob("*.pbtxt")) + sorted((ROOT / "examples").glob("*.pbtxt"))
    return [f for f in files if f.stat().st_size <= MAX_SEED]


def import_text():
    c = Corpus("import_text")
    for f in text_graphs():
        c.add(f.name, f.read_bytes())


def import_binary(tagflow):
    c = Corpus("import_binary")
    for f in sorted((ROOT / "tests" / "data").rglob("*.pb")):
        c.add(f.name, f.read_bytes())
    with tempfile.TemporaryDirectory() as tmp:
        for f in text_graphs():
            out = pathlib.Path(tmp) / (f.stem + ".pb")
            if subprocess.run([tagflow, "convert", str(f), str(out)], capture_output=True).returncode == 0:
                c.add(f.stem + ".pb", out.read_bytes())
    # MetaGraphDef{graph_def = 2} and SavedModel{schema_version = 1, meta_graphs = 2}
    for name in ["grappler_while_loop.pb", "tfnet_cond_test.pb", "while_sum.pb"]:
        path = c.dir / name
        if not path.exists():
            continue
        meta = field(2, path.read_bytes())
        c.add(name.replace(".pb", ".meta_graph.pb"), meta)
        c.add(name.replace(".pb", ".saved_model.pb"), varint(1 << 3) + varint(1) + field(2, meta))


CONFIGS = {
    "empty.ini": "",
    "devices_two.ini": '[tagflow]\ndevices=["/job:localhost/replica:0/task:0/device:CPU:0", '
                       '"/job:localhost/replica:0/task:0/device:CPU:1"]\n',
    "devices_partial.ini": '[tagflow]\ndevices=["/device:CPU:0"]\n',
    "devices_empty_list.ini": "[tagflow]\ndevices=[]\n",
    "scheduler.ini": "[scheduler]\npolicy='sharing'\nmax-threads=3\nmax-throughput=100\n",
    "work_stealing.ini": "[work-stealing]\naggressive-poll-attempts=10\naggressive-steal-interval=2\n"
                         "moderate-poll-attempts=50\nmoderate-steal-interval=5\nmoderate-sleep-duration=50us\n"
                         "relaxed-steal-interval=1\nrelaxed-sleep-duration=10ms\n",
    "comments.ini": "; a comment\n[tagflow] ; after a section\n; devices=[]\n",
    "middleman.ini": "[middleman]\nheartbeat-interval=100ms\nenable-automatic-connections=false\n",
    "global_key.ini": "foo=1\n",
    "nested.ini": "[scheduler]\n[scheduler.policy]\nx=1\n",
}


def config():
    c = Corpus("config")
    for f in sorted((ROOT / "configs").glob("*.ini")) + sorted((ROOT / "tests" / "data" / "configs").glob("*.ini")):
        c.add(f.name, f.read_bytes())
    for name, text in CONFIGS.items():
        c.add(name, text.encode())


# Programs of run_program.cpp: header (flags, seed/feed), then instructions.
PROGRAMS = {
    "constant": [0, 0, 0, 7],
    "arithmetic": [0, 3, 0, 5, 0, 3, 3, 0, 2, 3, 2],
    "placeholder_div": [0, 0, 2, 0, 0, 3, 3],          # x / 0: a step error
    "vector_reduce": [1, 9, 1, 3, 1, 2, 3, 16, 1],
    "cond": [0, 4, 2, 0, 1, 5, 1, 7, 2, 2, 0, 9, 0, 5],
    "cond_dead_fetch": [0, 4, 0, 3, 0, 1, 5, 1, 13, 0],  # a Switch port not taken
    "loop": [0, 0, 0, 0, 8, 0, 10, 4, 0, 1, 3, 0],
    "loop_two_vars": [1, 2, 0, 1, 0, 2, 8, 1, 0x1c, 6, 0, 3, 3, 2, 4, 0],
    "loop_wild": [0, 1, 0, 1, 8, 0, 0x21, 2, 0, 1, 4, 0, 1, 3, 0],
    "loop_max_iterations": [2, 5, 0, 0, 8, 0, 0x4e, 2, 0, 1],
    "nested_loops": [3, 7, 0, 0, 8, 0, 0x08, 10, 0, 0, 8, 0, 0x06, 4, 0, 1, 3, 0, 3, 0],
    "cond_in_loop": [1, 3, 0, 0, 8, 0, 0x0a, 12, 10, 0, 2, 5, 0, 7, 3, 3, 0, 9, 4, 0],
    "case": [0, 1, 0, 1, 9, 2, 3, 0, 5, 0, 2, 3, 0, 9, 4, 0, 4, 1],
    "raw_merge": [0, 0, 0, 1, 0, 2, 14],
    "control_dep": [2, 0, 0, 3, 15, 4, 19, 3, 0],
    "select": [0, 0, 0, 1, 0, 2, 0, 3, 18],
    "threaded_loop": [0x17, 9, 0, 0, 8, 0, 0x3e, 8, 0, 1, 3, 0, 0, 2, 3, 2],
    "shape_zeros": [0, 0, 1, 2, 4, 5, 17, 0, 17, 1],
}

# A graph that asks for 256 MiB (Fill) and twice that (Tile): the session's
# memory limit must end it.
FILL_OVER_MEMORY_LIMIT = """\
node { name: "dims" op: "Const" attr { key: "dtype" value { type: DT_INT32 } } attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 2 } } int_val: 8192 int_val: 8192 } } } }
node { name: "one" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 1 } } } }
node { name: "big" op: "Fill" input: "dims" input: "one" attr { key: "T" value { type: DT_FLOAT } } attr { key: "index_type" value { type: DT_INT32 } } }
node { name: "reps" op: "Const" attr { key: "dtype" value { type: DT_INT32 } } attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 2 } } int_val: 2 int_val: 1 } } } }
node { name: "tiled" op: "Tile" input: "big" input: "reps" attr { key: "T" value { type: DT_FLOAT } } attr { key: "Tmultiples" value { type: DT_INT32 } } }
node { name: "sum" op: "Sum" input: "tiled" input: "reps" attr { key: "T" value { type: DT_FLOAT } } attr { key: "Tidx" value { type: DT_INT32 } } attr { key: "keep_dims" value { b: false } } }
"""


def run():
    c = Corpus("run")
    for name, program in PROGRAMS.items():
        c.add(name, bytes(program))
    rng = random.Random(1)
    for i in range(24):
        c.add("random_%02d" % i, bytes(rng.randrange(256) for _ in range(rng.randrange(8, 64))))
    graphs = [ROOT / "examples" / "while_loop.pbtxt"] + sorted((ROOT / "tests" / "data" / "functional").glob("*.pbtxt"))
    graphs += [ROOT / "tests" / "data" / "corpus" / n for n in
               ["grappler_while_loop.pbtxt", "tfnet_cond_test.pbtxt", "ov_switch_merge_several_cond_flows.pbtxt",
                "tflite_merge4_placeholders.pbtxt", "mlir_graph_while_loop.pbtxt"]]
    for i, g in enumerate(graphs):
        c.add("graph_" + g.stem, bytes([0x80 | (i % 4) | (0x14 if i % 2 else 0) | (8 if i % 3 == 0 else 0), 3]) + g.read_bytes())
    c.add("graph_fill_over_memory_limit", bytes([0x80, 0]) + FILL_OVER_MEMORY_LIMIT.encode())


def main():
    tagflow = sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "build" / "tools" / "tagflow")
    import_text()
    import_binary(tagflow)
    config()
    run()


if __name__ == "__main__":
    main()
