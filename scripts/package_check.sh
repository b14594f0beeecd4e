#!/usr/bin/env bash
# Checks the two ways tpu-doctor is installed, reusing a finished build ($BUILD_DIR, default build):
#  1. `pip install --no-build-isolation .` into a fresh venv of Debian's python3 with no package
#     index (PIP_NO_INDEX): the venv's Python imports tpudoctor from the venv and checks a model,
#     and the venv's bin/tpu-doctor runs.
#  2. The .deb CPack writes: as root on a machine without tpu-doctor installed, `dpkg -i`, run
#     /usr/bin/tpu-doctor and the module, then `dpkg -r`; otherwise unpacked with `dpkg-deb -x`.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=$(realpath "${BUILD_DIR:-build}")
SRC=$PWD
MODEL=$SRC/testdata/models/nonzero_mask.onnx
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

say() { echo "package_check: $*"; }

# The module must report the model blocked, as the CLI does; $1 is the python, $2 where it imports from.
import_check() {
  (cd "$work" && "$1" - "$2" "$MODEL" <<'PY'
import sys
prefix, model = sys.argv[1], sys.argv[2]
sys.path.insert(0, prefix)
import tpudoctor
assert tpudoctor.__file__.startswith(prefix), (tpudoctor.__file__, prefix)
verdict = tpudoctor.check(model).verdict
assert verdict == "blocked", verdict
print(f"package_check: import tpudoctor {tpudoctor.__version__} from {tpudoctor.__file__}: {verdict}")
PY
  )
}

# The CLI: the bundled example is ready (exit 0), a blocked model exits 1.
cli_check() {
  "$1" check >/dev/null
  local status=0
  "$1" check "$MODEL" --format concise >/dev/null || status=$?
  [[ $status == 1 ]] || { say "$1 check $MODEL exited $status, expected 1" >&2; exit 1; }
  say "$1 runs ($("$1" --version))"
}

say "pip install --no-build-isolation . into a fresh venv, no package index"
/usr/bin/python3 -m venv "$work/venv"
PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1 "$work/venv/bin/pip" install -q \
  --no-build-isolation --config-settings "build-dir=$BUILD" "$SRC"
site=$("$work/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
import_check "$work/venv/bin/python" "$site"
cli_check "$work/venv/bin/tpu-doctor"

say "the .deb (cpack)"
cmake --build "$BUILD" --target package >/dev/null
deb=$(ls "$BUILD"/tpu-doctor_*.deb)
# Into files first: `grep -q` stops reading at its match, and dpkg-deb dies of the closed pipe.
dpkg-deb -f "$deb" Depends >"$work/depends"
dpkg-deb -c "$deb" >"$work/contents"
grep -q "python3 (>= 3" "$work/depends" || { say "$deb: no python3 in Depends" >&2; exit 1; }
# libzip is loaded at run time (dlopen), so shlibdeps cannot list it: packaging.cmake does.
grep -q "libzip[0-9]" "$work/depends" || { say "$deb: no libzip in Depends" >&2; exit 1; }
grep -q "usr/share/bash-completion/completions/tpu-doctor" "$work/contents" ||
  { say "$deb: no bash completion" >&2; exit 1; }
if [[ $(id -u) == 0 ]] && ! dpkg-query -W tpu-doctor >/dev/null 2>&1; then
  dpkg -i "$deb" >/dev/null
  trap 'dpkg -r tpu-doctor >/dev/null; rm -rf "$work"' EXIT
  root=""
  say "dpkg -i $(basename "$deb")"
else
  root=$work/root
  dpkg-deb -x "$deb" "$root"
  say "dpkg-deb -x $(basename "$deb") (not root, or tpu-doctor already installed: left alone)"
fi
cli_check "$root/usr/bin/tpu-doctor"
import_check /usr/bin/python3 "$root/usr/lib/python3/dist-packages"
say "ok"
