// LookupTable: a key-value table kept by the session's ResourceManager, the
// state behind TensorFlow's lookup ops (HashTableV2, MutableHashTableV2 and
// the LookupTable*V2 ops of ops/lookup_ops.cpp).
//
// Thread-safe: kernels of one step, and of concurrent steps, may use one
// table at once.
#pragma once

namespace tagflow::ops {

class LookupTable {
 public:
  virtual ~LookupTable() = default;
};

}  // namespace tagflow::ops
