#!/usr/bin/env bash
# The GitHub Action's check step (action.yml): runs `tpu-doctor check` on the workflow's files,
# writes SARIF for code scanning, prints the one-line-per-finding report to the log, and records
# the exit status in the step's outputs, so the SARIF is uploaded before the job fails.
#
# tpu-doctor comes from, in order: $TPUD_BINARY; `tpu-doctor` on PATH (the .deb or a pip install);
# otherwise it is built in a Debian 12 container from the action's own checkout (the platform
# scripts/setup.sh supports), needing only Docker, which GitHub's Ubuntu runners have.
#
# Inputs (environment): INPUT_PATHS (space-separated files or folders, default .), INPUT_TARGET,
# INPUT_ARGS (more flags, split on spaces), INPUT_FAIL_ON (error|warning|note|never),
# INPUT_SARIF_FILE. Outputs (appended to $GITHUB_OUTPUT when set): sarif-file, exit-code.
set -uo pipefail

ACTION_DIR=$(cd "$(dirname "$0")/.." && pwd)
WORKSPACE=${GITHUB_WORKSPACE:-$PWD}
PATHS=${INPUT_PATHS:-.}
TARGET=${INPUT_TARGET:-tpu-v5e}
FAIL_ON=${INPUT_FAIL_ON:-error}
SARIF=${INPUT_SARIF_FILE:-tpu-doctor.sarif}
read -r -a EXTRA <<<"${INPUT_ARGS:-}"
read -r -a INPUTS <<<"$PATHS"
FLAGS=(--target "$TARGET" --fail-on "$FAIL_ON" "${EXTRA[@]}")

output() { [[ -n "${GITHUB_OUTPUT:-}" ]] && echo "$1=$2" >>"$GITHUB_OUTPUT"; return 0; }

run_check() {  # run_check BINARY: the SARIF file, then the concise report for the log
  local binary=$1 status
  (cd "$WORKSPACE" && "$binary" check "${INPUTS[@]}" "${FLAGS[@]}" --format sarif >"$SARIF.tmp")
  status=$?
  if ((status == 2)); then
    rm -f "$WORKSPACE/$SARIF.tmp"
    return 2
  fi
  mv "$WORKSPACE/$SARIF.tmp" "$WORKSPACE/$SARIF"
  (cd "$WORKSPACE" && "$binary" check "${INPUTS[@]}" "${FLAGS[@]}" --format concise)
  return "$status"
}

run_in_container() {  # builds tpu-doctor in Debian 12 and runs this script there
  docker run --rm -v "$ACTION_DIR:/action:ro" -v "$WORKSPACE:/work" \
    -e INPUT_PATHS -e INPUT_TARGET -e INPUT_ARGS -e INPUT_FAIL_ON -e INPUT_SARIF_FILE \
    debian:12 bash -c '
      set -e
      cp -r /action /tmp/src
      TPUD_SETUP=build /tmp/src/scripts/setup.sh >&2
      cmake -S /tmp/src -B /tmp/build -DCMAKE_BUILD_TYPE=Release -DTPUD_BUILD_TESTS=OFF \
        -DTPUD_BUILD_BENCH=OFF -DTPUD_BUILD_PYTHON=OFF >&2
      cmake --build /tmp/build --target tpu-doctor -j "$(nproc)" >&2
      TPUD_BINARY=/tmp/build/tpu-doctor GITHUB_WORKSPACE=/work /tmp/src/scripts/action_check.sh --report-status'
}

if [[ "${1:-}" == --report-status ]]; then  # inside the container: the check's status is ours
  run_check "$TPUD_BINARY"
  exit
fi
if [[ -n "${TPUD_BINARY:-}" ]]; then
  run_check "$TPUD_BINARY"
elif command -v tpu-doctor >/dev/null; then
  run_check tpu-doctor
else
  run_in_container
fi
status=$?
output exit-code "$status"
if [[ -f "$WORKSPACE/$SARIF" ]]; then output sarif-file "$SARIF"; fi
exit 0
