#!/usr/bin/env bash
# Fetches the sources of the Python parser that `check train.py` compiles into tpu-doctor, into
# .deps/, once (nothing of it is committed):
#
# - tree-sitter's runtime: Debian 12's own source package (tree-sitter 0.20.7-1, the one its
#   libtree-sitter-dev is built from, with no Debian patch), fetched by apt from the machine's
#   own Debian mirrors (their deb-src twins, in a private apt state: the system's apt
#   configuration is not touched) and checked against its SHA-256. It is compiled with the
#   grammar and the tree flattening as one link-time optimised unit, which the packaged archive
#   cannot be: 12% off checking a 10,000-line script (bench/README.md, session 25).
# - tree-sitter's Python grammar (the generated parser.c and scanner.c) from the npm registry,
#   checked against its SHA-256 before anything is unpacked. Its parser is ABI 14
#   (LANGUAGE_VERSION in parser.c), the newest the 0.20.7 runtime loads; 0.23 reads what 0.20.4
#   could not (a trailing comma inside a subscript, `-> Tuple[int, int,]`; PEP 695's `type`
#   statements and type parameters).
set -euo pipefail
cd "$(dirname "$0")/.."

RUNTIME=tree-sitter-0.20.7
RUNTIME_DEB_VERSION=0.20.7-1
RUNTIME_ORIG=tree-sitter_0.20.7.orig.tar.xz
RUNTIME_SHA256=e8c0573be475dce5b024d83628a3eb47376923da701376e55a11804cc5d25487

GRAMMAR=tree-sitter-python
GRAMMAR_VERSION=0.23.6
GRAMMAR_SHA256=aab5b860d93dbf84b37fed532f7dacc0468ede5387d0c74911d68f964287662a

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p .deps

# Downloads Debian's source package of tree-sitter into $tmp with apt, from the deb-src lists in
# the folder $1, in a private apt state (the system's apt configuration and lists untouched).
apt_source() {
  local state
  state=$(mktemp -d -p "$tmp")
  mkdir -p "$state/lists/partial"
  local apt=(apt-get -qq -o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=$1"
             -o "Dir::State::Lists=$state/lists")
  # Root's apt would hand the download to its unprivileged _apt user, who cannot write here.
  if [[ $(id -u) -eq 0 ]]; then apt+=(-o APT::Sandbox::User=root); fi
  "${apt[@]}" update >/dev/null 2>&1 || true
  (cd "$tmp" && "${apt[@]}" source --download-only "tree-sitter=$RUNTIME_DEB_VERSION" \
    >/dev/null 2>&1)
}

fetch_runtime() {
  local dest=.deps/$RUNTIME
  if [[ -f $dest/lib/src/lib.c && -f $dest/lib/include/tree_sitter/api.h ]]; then
    echo "setup: $RUNTIME present"
    return
  fi
  echo "setup: fetching Debian's source of $RUNTIME ($RUNTIME_DEB_VERSION)"
  # First from the deb-src twins of the Debian sources the machine lists (one-line and deb822
  # files): its own mirrors. A list that has no source index (a third-party repository) only
  # fails its own update; should the machine's mirrors serve no sources at all, Debian's CDN.
  local f twins=$tmp/twins
  mkdir -p "$twins"
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    if [[ -f $f ]]; then
      sed -nE 's/^deb([[:space:]])/deb-src\1/p' "$f" >"$twins/$(basename "$f").list"
    fi
  done
  for f in /etc/apt/sources.list.d/*.sources; do
    if [[ -f $f ]]; then
      sed -E 's/^Types:.*/Types: deb-src/' "$f" >"$twins/$(basename "$f")"
    fi
  done
  local cdn=$tmp/cdn
  mkdir -p "$cdn"
  echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg]" \
    "http://deb.debian.org/debian bookworm main" >"$cdn/debian.list"
  if ! apt_source "$twins" && ! apt_source "$cdn"; then
    echo "setup: apt could not fetch the source of tree-sitter $RUNTIME_DEB_VERSION" >&2
    exit 1
  fi
  if ! echo "$RUNTIME_SHA256  $tmp/$RUNTIME_ORIG" | sha256sum --check --status; then
    echo "setup: $RUNTIME_ORIG does not have the expected SHA-256; refusing it" >&2
    exit 1
  fi
  mkdir -p "$tmp/runtime"
  tar -xJf "$tmp/$RUNTIME_ORIG" -C "$tmp/runtime" "$RUNTIME/lib" "$RUNTIME/LICENSE"
  rm -rf "$dest"
  mv "$tmp/runtime/$RUNTIME" "$dest"
  echo "setup: $RUNTIME in $dest"
}

fetch_grammar() {
  local dest=.deps/$GRAMMAR-$GRAMMAR_VERSION
  if [[ -f $dest/src/parser.c && -f $dest/src/scanner.c ]]; then
    echo "setup: $GRAMMAR $GRAMMAR_VERSION present"
    return
  fi
  echo "setup: fetching $GRAMMAR@$GRAMMAR_VERSION from the npm registry"
  (cd "$tmp" && npm pack --silent "$GRAMMAR@$GRAMMAR_VERSION" >/dev/null)
  local tarball=$tmp/$GRAMMAR-$GRAMMAR_VERSION.tgz
  if ! echo "$GRAMMAR_SHA256  $tarball" | sha256sum --check --status; then
    echo "setup: $GRAMMAR-$GRAMMAR_VERSION.tgz does not have the expected SHA-256; refusing it" >&2
    exit 1
  fi
  mkdir -p "$tmp/grammar"
  tar -xzf "$tarball" -C "$tmp/grammar" package/src package/LICENSE
  rm -rf "$dest"
  mv "$tmp/grammar/package" "$dest"
  echo "setup: $GRAMMAR $GRAMMAR_VERSION in $dest"
}

fetch_runtime
fetch_grammar
