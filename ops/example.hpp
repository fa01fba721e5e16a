// A tf.Example written by hand: the text a user types for a signature that
// reads serialized tf.Examples (`tagflow run DIR --example inputs='x=1.5'`),
// made into the bytes of one serialized Example
// (ops/proto/example.proto, wire-compatible with tensorflow.Example).
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "ops/status.hpp"

namespace tagflow::ops {

// Two forms (docs/models.md):
//  - features: `NAME=VALUES[;NAME=VALUES...]`, VALUES one value or a
//    comma-separated list, in brackets or not. The values give the kind:
//    quoted strings ("a", with \" and \\ escapes) a bytes_list, integers
//    only an int64_list, any other number (1.5, 2e3, -inf, nan, or
//    integers mixed with them) a float_list. `x=1.5;n=[1,2];s="a b"`.
//  - text format: anything containing `{` is read as a text-format
//    Example, `features { feature { key: "x" value { float_list { value:
//    1.5 } } } }`.
// An error names the feature and what is wrong with it.
Expected<std::string> serialized_example(std::string_view text);

}  // namespace tagflow::ops
