#!/usr/bin/env bash
# Make a Chromium available to the Playwright browser tests (tests/browser/).
# The order matches tests/browser/conftest.py, which picks the browser the same way:
#   1. CHROMIUM_PATH, /usr/bin/chromium or /usr/bin/chromium-browser already there -> use it;
#   2. root on Debian/Ubuntu -> apt-get install chromium (+ fonts-noto-cjk for the Japanese UI);
#   3. otherwise -> Playwright's own Chromium download (`playwright install chromium`).
# Japanese glyphs need a CJK font; without one the Japanese screenshots show boxes.
set -euo pipefail
PY=${1:-.venv/bin/python}
# shellcheck source=scripts/apt_helpers.sh
. "$(dirname "${BASH_SOURCE[0]}")/apt_helpers.sh"  # is_root, has_apt, apt_install
has_font() { fc-list : family 2>/dev/null | grep -i "$1" >/dev/null; }  # no -q: with pipefail an early grep exit would SIGPIPE fc-list

system_chromium() {
  local c
  for c in "${CHROMIUM_PATH:-}" /usr/bin/chromium /usr/bin/chromium-browser; do
    if [ -n "$c" ] && [ -x "$c" ]; then
      echo "$c"
      return 0
    fi
  done
  return 1
}

if chromium=$(system_chromium); then
  echo "Chromium: $chromium"
elif is_root && has_apt; then
  echo "Installing Debian's chromium..."
  apt_install chromium fonts-liberation fontconfig
  chromium=$(system_chromium)
  echo "Chromium: $chromium"
else
  echo "No system Chromium; installing Playwright's own Chromium..."
  "$PY" -m playwright install chromium
fi

# Fonts: CJK for the Japanese UI, colour emoji for the page icons in screenshots.
missing=()
has_font 'Noto Sans CJK' || missing+=(fonts-noto-cjk)
has_font 'Noto Color Emoji' || missing+=(fonts-noto-color-emoji)
if [ ${#missing[@]} -gt 0 ]; then
  if is_root && has_apt; then
    echo "Installing ${missing[*]}..."
    apt_install fontconfig "${missing[@]}"
  else
    echo "warning: fonts missing (${missing[*]}); Japanese text or icons in screenshots may show as boxes" >&2
  fi
fi
