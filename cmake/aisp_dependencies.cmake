# Header-only or static dependencies only: the binary must run on the GPU machine unchanged.
find_package(CUDAToolkit REQUIRED)
find_package(Threads REQUIRED)
find_package(nlohmann_json 3 REQUIRED)
find_package(CLI11 QUIET CONFIG)
find_path(AISP_CLI11_INCLUDE CLI/CLI.hpp REQUIRED)
find_path(AISP_FMT_INCLUDE fmt/format.h REQUIRED)
set(CMAKE_BUILD_RPATH "${CUDAToolkit_LIBRARY_DIR};/usr/local/cuda/lib64")  # libcupti, on this machine and the lent one
# SQLite for the results history, linked statically (the GPU machine has no SQLite).
find_path(AISP_SQLITE_INCLUDE sqlite3.h REQUIRED)
find_library(AISP_SQLITE_STATIC NAMES libsqlite3.a REQUIRED)
