#!/usr/bin/env bash
# Pinned npm packages the take-home tests use (issue 45), fetched like axe-core (scripts/ensure_axe.sh):
# `npm pack` from the npm registry, the tarball's sha512 checked against the pin, then only the files
# the tests need copied under artifacts/:
#   scorm-again  - a SCORM 1.2 run-time (window.API) for tests/browser/test_takehome_browser.py
#   gift-pegjs   - a maintained GIFT parser (its generated lib/gift-parser.js), run with node by
#                  tests/test_takehome.py to read our GIFT files back
# Without npm (or node for the GIFT reader) those tests skip on a developer's machine and fail in CI.
set -euo pipefail
# shellcheck source=scripts/apt_helpers.sh
. "$(dirname "${BASH_SOURCE[0]}")/apt_helpers.sh"  # ensure_npm

fetch() {  # name version integrity files...
  local name=$1 version=$2 integrity=$3
  shift 3
  local dest="artifacts/npm/$name-$version"
  if [ -s "$dest/.complete" ]; then
    echo "$name $version: $dest"
    return 0
  fi
  ensure_npm "$name (its tests will be skipped)" || return 1
  local tmp
  tmp=$(mktemp -d)
  (cd "$tmp" && npm pack --silent "$name@$version" >/dev/null)
  local tarball="$tmp/$name-$version.tgz"
  local actual
  actual="sha512-$(openssl dgst -sha512 -binary "$tarball" | base64 -w0)"
  if [ "$actual" != "$integrity" ]; then
    echo "$name tarball integrity mismatch: $actual" >&2
    rm -rf "$tmp"
    return 1
  fi
  tar -xzf "$tarball" -C "$tmp" "${@/#/package/}"
  mkdir -p "$dest"
  for file in "$@"; do
    mkdir -p "$dest/$(dirname "$file")"
    cp "$tmp/package/$file" "$dest/$file"
  done
  echo "$integrity" >"$dest/.complete"
  rm -rf "$tmp"
  echo "$name $version: $dest"
}


fetch scorm-again 3.4.3 "sha512-Zbe+7ArMUbT1lVnqYxsbGRfI9JD9JVqEPzZLQdk0nfNmcDYJ404rMO9nbkQ0Hzwux5uACF9zKsvc29Q/ZzMOdg==" \
  dist/scorm12.min.js LICENSE
fetch gift-pegjs 1.0.2 "sha512-S/A2wBDdia2QWKpB5FtASx1gguep1wg5If5glDWJgUMiABICJT7ogArGfsdgozevhBdbdOiHhrykJP86hbgvRw==" \
  lib/gift-parser.js LICENSE
