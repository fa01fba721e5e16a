#!/usr/bin/env python3
"""Writes the seeds of the SavedModel loader's fuzzer (fuzz/saved_model_fuzzer.cpp)
from the SavedModels of tests/data/savedmodels: byte 0 (1: the model file is
text), then the model file, variables.index and the data file, each after a
4-byte little-endian length."""
import os
import struct

ROOT = os.path.join(os.path.dirname(__file__), "..")
OUT = os.path.join(ROOT, "fuzz", "corpus", "saved_model")


def seed(text, model, index, data):
    out = bytes([1 if text else 0])
    for part in (model, index, data):
        out += struct.pack("<I", len(part)) + part
    return out


def read(path):
    with open(path, "rb") as f:
        return f.read()


def main():
    os.makedirs(OUT, exist_ok=True)
    for name in ("saved_model_counter", "saved_model_half_plus_two_cpu", "saved_model_half_plus_two_tf2_cpu"):
        d = os.path.join(ROOT, "tests", "data", "savedmodels", name, "00000123")
        v = os.path.join(d, "variables")
        s = seed(False, read(os.path.join(d, "saved_model.pb")), read(os.path.join(v, "variables.index")),
                 read(os.path.join(v, "variables.data-00000-of-00001")))
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(s)
    # A text SavedModel without a saver (restored by name) over the counter's checkpoint.
    d = os.path.join(ROOT, "tests", "data", "savedmodels", "saved_model_counter", "00000123", "variables")
    text = b'''meta_graphs {
  meta_info_def { tags: "serve" tensorflow_version: "1.14.0" }
  graph_def {
    node { name: "counter" op: "VariableV2" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "shape" value { shape { } } } }
    node { name: "read" op: "Identity" input: "counter" attr { key: "T" value { type: DT_FLOAT } } }
    versions { producer: 27 }
  }
  signature_def { key: "get_counter" value {
    outputs { key: "output" value { name: "read:0" dtype: DT_FLOAT tensor_shape { } } }
    method_name: "tensorflow/serving/predict" } }
}
'''
    with open(os.path.join(OUT, "text_no_saver"), "wb") as f:
        f.write(seed(True, text, read(os.path.join(d, "variables.index")),
                     read(os.path.join(d, "variables.data-00000-of-00001"))))


if __name__ == "__main__":
    main()
