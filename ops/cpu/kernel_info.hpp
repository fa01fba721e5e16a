// What the kernels run with, for `tagflow --version` and trace headers:
// "isa" (the level in use, ops/cpu/isa.hpp), "machine_isa" (the widest this
// machine has), "onednn" (oneDNN's version) and "onednn_isa" (the code
// oneDNN generates). Thread-safe; fixes the ISA level if nothing did yet.
#pragma once

#include <map>
#include <string>

namespace tagflow::ops::cpu {

std::map<std::string, std::string> kernel_info();

// "kernels: isa avx2 (machine: avx2), oneDNN 2.6.3 generating avx2 code"
std::string kernel_info_text();

}  // namespace tagflow::ops::cpu
