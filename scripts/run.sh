#!/usr/bin/env bash
# Set-up, build, then `tpu-doctor check` on the given model (the bundled example when none).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
exec build/tpu-doctor check "$@"
