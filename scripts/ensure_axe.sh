#!/usr/bin/env bash
# Put a pinned axe-core (the accessibility rules engine) where the browser tests look for it:
# artifacts/axe-core/<version>/axe.min.js (tests/browser/test_axe_browser.py injects it into each page).
# The tarball comes from the npm registry through `npm pack`, and its sha512 must match the pin below.
set -euo pipefail
# shellcheck source=scripts/apt_helpers.sh
. "$(dirname "${BASH_SOURCE[0]}")/apt_helpers.sh"  # ensure_npm
AXE_VERSION=4.14.1
AXE_INTEGRITY="sha512-FHfa+lmNjQZfJz1q8wKqIDwC6DExcHt/pkjNQb09a3NPjCKg2rhu5qb2S4r76ASyFNNtuFooJpZe37OgudVGtQ=="
DEST="artifacts/axe-core/$AXE_VERSION"

if [ -s "$DEST/axe.min.js" ]; then
  echo "axe-core $AXE_VERSION: $DEST/axe.min.js"
  exit 0
fi
ensure_npm "axe-core (the axe browser test will be skipped)" || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "axe-core@$AXE_VERSION" >/dev/null)
tarball="$tmp/axe-core-$AXE_VERSION.tgz"
actual="sha512-$(openssl dgst -sha512 -binary "$tarball" | base64 -w0)"
if [ "$actual" != "$AXE_INTEGRITY" ]; then
  echo "axe-core tarball integrity mismatch: $actual" >&2
  exit 1
fi
tar -xzf "$tarball" -C "$tmp" package/axe.min.js package/LICENSE
mkdir -p "$DEST"
cp "$tmp/package/axe.min.js" "$tmp/package/LICENSE" "$DEST/"
echo "axe-core $AXE_VERSION: $DEST/axe.min.js"
