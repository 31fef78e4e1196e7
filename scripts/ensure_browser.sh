#!/usr/bin/env bash
# Make a Chromium available to the Playwright browser tests.
# 1. a system Chromium already there (or CHROMIUM_PATH) -> nothing to do;
# 2. root on Debian/Ubuntu -> apt-get install chromium + Noto CJK fonts (Japanese glyphs);
# 3. otherwise -> Playwright's own browser download.
set -euo pipefail
PY=${1:-.venv/bin/python}
for c in "${CHROMIUM_PATH:-}" /usr/bin/chromium /usr/bin/chromium-browser; do
  if [ -n "$c" ] && [ -x "$c" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null && ! fc-list 2>/dev/null | grep -qi 'Noto Sans CJK'; then
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fonts-noto-cjk >/dev/null 2>&1 || true
    fi
    exit 0
  fi
done
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "Installing Debian's chromium and fonts-noto-cjk..."
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-noto-cjk >/dev/null
  exit 0
fi
echo "No system Chromium; installing Playwright's browser..."
"$PY" -m playwright install chromium
