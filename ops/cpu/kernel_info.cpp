#include "ops/cpu/kernel_info.hpp"

#include "ops/cpu/dnnl.hpp"
#include "ops/cpu/isa.hpp"

namespace tagflow::ops::cpu {

namespace {
std::string dnnl_version_text() {
  const dnnl_version_t* v = dnnl_version();
  return std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
}
}  // namespace

std::map<std::string, std::string> kernel_info() {
  return {{"isa", to_string(active_isa())},
          {"machine_isa", to_string(machine_isa())},
          {"onednn", dnnl_version_text()},
          {"onednn_isa", dnnl_isa_name()}};
}

std::string kernel_info_text() {
  return "kernels: isa " + isa_summary() + ", oneDNN " + dnnl_version_text() + " generating " + dnnl_isa_name() +
         " code";
}

}  // namespace tagflow::ops::cpu
