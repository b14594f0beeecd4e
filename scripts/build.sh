#!/usr/bin/env bash
# Configures and builds tpu-doctor into build/ (or $BUILD_DIR). Extra arguments go to cmake.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-RelWithDebInfo} "$@" >/dev/null
cmake --build "$BUILD_DIR" -j"$(nproc)"
# Make the Python package of this build importable (when this build has one).
if [[ -f "$BUILD_DIR/python/tpudoctor/__init__.py" ]]; then
  BUILD_DIR="$BUILD_DIR" scripts/install_python.sh
fi
