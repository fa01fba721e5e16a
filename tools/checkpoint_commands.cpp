// The variables of a checkpoint (tensor bundle), as `tagflow inspect`
// prints them.
#include <cstdio>

#include "ops/tensor_bundle.hpp"
#include "tools/commands.hpp"

namespace tagflow::tools {

int print_checkpoint_variables(const std::string& prefix) {
  auto reader = ops::BundleReader::open(prefix);
  if (!reader.ok()) {
    if (reader.status().code() == ops::Error::not_found) {
      std::printf("\nvariables: none (no checkpoint at %s)\n", prefix.c_str());
      return 0;
    }
    return fail(reader.status());
  }
  std::printf("\nvariables: %zu tensors in %s\n", reader->entries().size(), prefix.c_str());
  for (const ops::BundleEntry& e : reader->entries())
    std::printf("  %s  %s %s\n", e.name.c_str(), ops::dtype_name(e.dtype).c_str(), e.shape.to_string().c_str());
  return 0;
}

}  // namespace tagflow::tools
