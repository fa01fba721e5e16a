# FindRE2: locate RE2 as Debian ships it (libre2-dev) — a header and a
# shared library, with no CMake config. Defines the imported target
# RE2::re2. tagflow compiles the patterns of TensorFlow's regex ops with it,
# the library TensorFlow itself uses, so patterns mean what they mean there.

find_path(RE2_INCLUDE_DIR re2/re2.h)
find_library(RE2_LIBRARY re2)

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(RE2 REQUIRED_VARS RE2_INCLUDE_DIR RE2_LIBRARY)

if(RE2_FOUND AND NOT TARGET RE2::re2)
  add_library(RE2::re2 UNKNOWN IMPORTED)
  set_target_properties(RE2::re2 PROPERTIES
    IMPORTED_LOCATION "${RE2_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${RE2_INCLUDE_DIR}")
endif()
mark_as_advanced(RE2_INCLUDE_DIR RE2_LIBRARY)
