// libFuzzer harness: a configuration file's text as a Session reads it
// (actors::read_session_config: CAF's INI parser, tagflow's checks of every
// key and type, the device names), without an actor system. CAF's parser
// itself is not instrumented (Debian's libcaf): coverage guides the
// fuzzer through tagflow's checks only. Seeds: fuzz/corpus/config.
#include <cstddef>
#include <cstdint>
#include <string>

#include "actors/session.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  (void)tagflow::actors::read_session_config(text, "<fuzz>");
  return 0;
}
