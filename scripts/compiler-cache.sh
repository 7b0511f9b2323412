# Sourced by the scripts that compile (test.sh, demo.sh, gpu-bundle.sh, fuzz.sh): every compile of
# every build (CMake's presets, pip's build of the package, nvcc's) goes through ccache, with its
# cache outside the clone ($GRAPHTIER_CCACHE_DIR, default ~/.cache/graphtier/ccache), so the next
# clean clone on this machine (CI's, after a change is submitted) compiles only what changed. The
# clone's absolute path is kept out of what ccache hashes: paths under the clone's root are rewritten
# relative to it (CCACHE_BASEDIR) and the build directory is not hashed (CCACHE_NOHASHDIR; the
# objects' DWARF compilation directory is then the first clone's). The one compile line that names
# the clone's location, tests/test_util.cpp's (tests/CMakeLists.txt), is compiled once per build,
# and unity batches include their files by relative paths (cmake/unity.cmake).
# GRAPHTIER_CCACHE=0 turns it off. Takes effect when a build directory is first configured (CMake
# reads CMAKE_<LANG>_COMPILER_LAUNCHER from the environment then).
if [ "${GRAPHTIER_CCACHE:-1}" != 0 ] && command -v ccache >/dev/null 2>&1; then
  export CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache
  export CMAKE_CUDA_COMPILER_LAUNCHER=ccache
  export CCACHE_DIR="${GRAPHTIER_CCACHE_DIR:-$HOME/.cache/graphtier/ccache}"
  CCACHE_BASEDIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  export CCACHE_BASEDIR CCACHE_NOHASHDIR=1
  export CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-20G}"
fi
