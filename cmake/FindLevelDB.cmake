# FindLevelDB: locate LevelDB as Debian ships it (libleveldb-dev) — headers
# and a shared library, with no CMake config. Defines the imported target
# LevelDB::leveldb. tagflow uses only its table format (leveldb/table.h,
# leveldb/table_builder.h): the index file of a checkpoint.

find_path(LEVELDB_INCLUDE_DIR leveldb/table.h)
find_library(LEVELDB_LIBRARY leveldb)

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(LevelDB REQUIRED_VARS LEVELDB_INCLUDE_DIR LEVELDB_LIBRARY)

if(LevelDB_FOUND AND NOT TARGET LevelDB::leveldb)
  add_library(LevelDB::leveldb UNKNOWN IMPORTED)
  set_target_properties(LevelDB::leveldb PROPERTIES
    IMPORTED_LOCATION "${LEVELDB_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${LEVELDB_INCLUDE_DIR}")
endif()
mark_as_advanced(LEVELDB_INCLUDE_DIR LEVELDB_LIBRARY)
