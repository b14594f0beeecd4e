#!/usr/bin/env bash
# Set-up, build, then `tpu-doctor check` on the given model (the bundled example when none).
set -euo pipefail
cd "$(dirname "$0")/.."
# Set-up and build talk on stderr, so stdout is only tpu-doctor's report (e.g. with --format json).
scripts/setup.sh >&2
scripts/build.sh >&2
exec build/tpu-doctor check "$@"
