#!/usr/bin/env bash
# Set-up, build, the packaging checks (pip into a venv, the .deb; scripts/package_check.sh), then
# the whole test suite (CTest over GoogleTest and pytest).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
BUILD_DIR="${BUILD_DIR:-build}" scripts/package_check.sh
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure -j"$(nproc)"
