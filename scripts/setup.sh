#!/usr/bin/env bash
# Installs the Debian 12 packages tpu-doctor needs to build, test and benchmark (TPUD_SETUP=build:
# only to build the CLI). Idempotent: it installs only what is missing. Run as root (or with sudo
# available).
set -euo pipefail

# What building the CLI needs (TPUD_SETUP=build installs only these: the GitHub Action's container).
PACKAGES=(
  build-essential cmake ninja-build pkg-config
  libprotobuf-dev protobuf-compiler libonnx-dev
  libfmt-dev nlohmann-json3-dev libcli11-dev libtomlplusplus-dev libyaml-dev libre2-dev libvectorscan-dev zlib1g-dev libzip-dev libhdf5-dev
  # The Python source checker (`check train.py`) compiles tree-sitter from Debian's source
  # package and its Python grammar from the npm registry (scripts/fetch_parser.sh): apt fetches
  # the one (xz-utils unpacks it), npm the other.
  xz-utils
  # `check --diff`: unified diffs of what --fix would change (header-only).
  libdtl-dev
)
if [[ "${TPUD_SETUP:-all}" != build ]]; then
  PACKAGES+=(
    libgtest-dev libgmock-dev libbenchmark-dev
    python3 python3-onnx python3-numpy bc
    # The logs benchmark's baseline (bench/logs_bench.sh runs ripgrep beside tpu-doctor).
    ripgrep
    # The Python module and its tests: pybind11 for Debian's python3; torch (1.13) for live-module
    # tests, h5py for legacy Keras .h5 files, jsonschema for the SARIF test, Chromium for the HTML
    # one, PyYAML for the action and pre-commit files' tests, venv for `pip install .` into one.
    python3-dev pybind11-dev python3-pybind11 python3-pytest python3-torch python3-h5py
    python3-jsonschema chromium python3-yaml python3-venv
  )
fi
# npm fetches the grammar; a machine whose Node.js already brings npm needs no Debian package.
command -v npm >/dev/null || PACKAGES+=(npm)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "setup: all packages present"
else
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

exec "$(dirname "$0")/fetch_parser.sh"
