#!/usr/bin/env bash
# Fetches tree-sitter's Python grammar (the generated parser.c and scanner.c the build compiles)
# from the npm registry into .deps/, once: the package's tarball is checked against its SHA-256
# before anything is unpacked, and nothing of it is committed. Its parser is ABI 14
# (LANGUAGE_VERSION in parser.c), the newest Debian 12's libtree-sitter 0.20.7 loads; 0.23 reads
# what 0.20.4 could not (a trailing comma inside a subscript, `-> Tuple[int, int,]`; PEP 695's
# `type` statements and type parameters).
set -euo pipefail
cd "$(dirname "$0")/.."

NAME=tree-sitter-python
VERSION=0.23.6
SHA256=aab5b860d93dbf84b37fed532f7dacc0468ede5387d0c74911d68f964287662a
DEST=.deps/$NAME-$VERSION

if [[ -f $DEST/src/parser.c && -f $DEST/src/scanner.c ]]; then
  echo "setup: $NAME $VERSION present"
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "setup: fetching $NAME@$VERSION from the npm registry"
(cd "$tmp" && npm pack --silent "$NAME@$VERSION" >/dev/null)
tarball=$tmp/$NAME-$VERSION.tgz
if ! echo "$SHA256  $tarball" | sha256sum --check --status; then
  echo "setup: $NAME-$VERSION.tgz does not have the expected SHA-256; refusing it" >&2
  exit 1
fi
mkdir -p "$tmp/x"
tar -xzf "$tarball" -C "$tmp/x" package/src package/LICENSE
rm -rf "$DEST"
mkdir -p .deps
mv "$tmp/x/package" "$DEST"
echo "setup: $NAME $VERSION in $DEST"
