# All dependencies are Debian 12 system packages (see scripts/install-deps.sh).
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)
find_package(Protobuf REQUIRED)
find_package(gRPC CONFIG REQUIRED)
find_package(GTest CONFIG REQUIRED)
find_package(yaml-cpp CONFIG REQUIRED)
find_package(nlohmann_json CONFIG REQUIRED)
find_package(CLI11 CONFIG REQUIRED)
find_package(spdlog CONFIG REQUIRED)

pkg_check_modules(SYSTEMD REQUIRED IMPORTED_TARGET libsystemd)
pkg_check_modules(RE2 REQUIRED IMPORTED_TARGET re2)
pkg_check_modules(SQLITE3 REQUIRED IMPORTED_TARGET sqlite3)
pkg_check_modules(HS REQUIRED IMPORTED_TARGET libhs)
pkg_check_modules(CURL REQUIRED IMPORTED_TARGET libcurl)
# MUNGE authenticates attrib's RPCs (the key every Slurm cluster shares); OpenSSL's
# SHA-256 (already linked by gRPC) binds each credential to its request.
pkg_check_modules(MUNGE REQUIRED IMPORTED_TARGET munge)
find_package(OpenSSL REQUIRED COMPONENTS Crypto)
# cpp-httplib serves attributiond's /metrics. Debian builds it as a small shared library
# (libcpp-httplib.so) from the header; the .pc carries its defines.
pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib>=0.11)
# zstd compresses the raw evidence the archive keeps for every attempt.
pkg_check_modules(ZSTD REQUIRED IMPORTED_TARGET libzstd)
# The log-file collectors read logrotate's gzipped generations (collectors/rotated_files.cpp).
find_package(ZLIB REQUIRED)

# libslurm ships no pkg-config file: headers <slurm/*.h>, library -lslurm.
find_path(SLURM_INCLUDE_DIR slurm/slurmdb.h REQUIRED)
find_library(SLURM_LIBRARY slurm PATH_SUFFIXES slurm-wlm REQUIRED)
add_library(Slurm::slurm UNKNOWN IMPORTED)
set_target_properties(Slurm::slurm PROPERTIES
  IMPORTED_LOCATION "${SLURM_LIBRARY}"
  INTERFACE_INCLUDE_DIRECTORIES "${SLURM_INCLUDE_DIR}")
add_library(Slurm::headers INTERFACE IMPORTED)
set_target_properties(Slurm::headers PROPERTIES
  INTERFACE_INCLUDE_DIRECTORIES "${SLURM_INCLUDE_DIR}")
