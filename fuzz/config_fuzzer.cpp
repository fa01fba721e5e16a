// libFuzzer harness: a configuration's text as a Session reads it
// (Session::resolve_options with SessionOptions::config_text: CAF's INI
// parser, tagflow's checks of every key, type and range, the device names),
// without an actor system. CAF's parser itself is not instrumented
// (Debian's libcaf): coverage guides the fuzzer through tagflow's checks
// only. Seeds: fuzz/corpus/config.
#include <cstddef>
#include <cstdint>
#include <string>

#include "actors/session.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tagflow::actors::SessionOptions options;
  options.config_text.assign(reinterpret_cast<const char*>(data), size);
  (void)tagflow::actors::Session::resolve_options(options);
  return 0;
}
