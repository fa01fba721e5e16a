# FindLibZip: locate libzip as Debian ships it (libzip-dev). Its own CMake
# config cannot be used: it declares imported targets for the zipcmp,
# zipmerge and ziptool programs, which are in other packages, and fails
# when they are not installed. Defines the imported target LibZip::zip.
# tagflow reads NumPy's .npz archives with it (ops/npy.cpp).

find_path(LIBZIP_INCLUDE_DIR zip.h)
find_library(LIBZIP_LIBRARY zip)

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(LibZip REQUIRED_VARS LIBZIP_INCLUDE_DIR LIBZIP_LIBRARY)

if(LibZip_FOUND AND NOT TARGET LibZip::zip)
  add_library(LibZip::zip UNKNOWN IMPORTED)
  set_target_properties(LibZip::zip PROPERTIES
    IMPORTED_LOCATION "${LIBZIP_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${LIBZIP_INCLUDE_DIR}")
endif()
mark_as_advanced(LIBZIP_INCLUDE_DIR LIBZIP_LIBRARY)
