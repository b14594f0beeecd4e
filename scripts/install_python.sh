#!/usr/bin/env bash
# Makes the `tpudoctor` Python package of this build importable by Debian's python3 without
# setting any path: a .pth file in its site-packages names build/python (or $BUILD_DIR/python).
# Rebuilding updates the package in place; run once after the first build.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
PKG_ROOT=$(realpath "$BUILD_DIR/python")
if [[ ! -f "$PKG_ROOT/tpudoctor/__init__.py" ]]; then
  echo "install_python: $PKG_ROOT/tpudoctor is not built (run scripts/build.sh)" >&2
  exit 2
fi
SITE=$(/usr/bin/python3 -c 'import site; print(site.getsitepackages()[0])')
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
$SUDO mkdir -p "$SITE"
echo "$PKG_ROOT" | $SUDO tee "$SITE/tpudoctor.pth" >/dev/null
/usr/bin/python3 -c 'import tpudoctor' || { echo "install_python: import failed" >&2; exit 1; }
