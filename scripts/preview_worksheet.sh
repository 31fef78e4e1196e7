#!/usr/bin/env bash
# Build sample worksheets (issue 19) and render their pages to PNG, to look at the typesetting.
#   bash scripts/preview_worksheet.sh [.venv/bin/python] [out dir]
# Writes <out>/<name>.pdf and <out>/<name>-<page>.png for an English and a Japanese worksheet.
# Rendering uses pdftoppm from Debian's poppler-utils, installed here when missing (root + apt).
set -euo pipefail
PY=${1:-.venv/bin/python}
OUT=${2:-artifacts/worksheet}
export DEBIAN_FRONTEND=noninteractive

if ! command -v pdftoppm >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "Installing Debian's poppler-utils (pdftoppm)..."
    apt-get install -y -qq --no-install-recommends poppler-utils >/dev/null 2>&1 || {
      apt-get update -qq && apt-get install -y -qq --no-install-recommends poppler-utils >/dev/null; }
  else
    echo "pdftoppm is missing: install poppler-utils to render the pages" >&2
    exit 1
  fi
fi

mkdir -p "$OUT"
"$PY" - "$OUT" <<'PYEOF'
import sys
from pathlib import Path

from attention_ui.worksheet.worksheet import WorksheetSettings, build_worksheet

out = Path(sys.argv[1])
samples = {
    "en-none": WorksheetSettings(exercises=2, students=2, first_seed=0, lang="en"),
    "ja-causal": WorksheetSettings(exercises=2, students=2, first_seed=0, lang="ja", causal=True),
}
for name, settings in samples.items():
    (out / f"{name}.pdf").write_bytes(build_worksheet(settings))
    print(out / f"{name}.pdf")
PYEOF
for pdf in "$OUT"/*.pdf; do
  pdftoppm -r "${DPI:-70}" -png "$pdf" "${pdf%.pdf}"
done
ls "$OUT"
