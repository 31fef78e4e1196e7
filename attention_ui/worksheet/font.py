"""The Japanese font the worksheet PDF embeds: IPAexGothic, shipped inside a pinned PyPI package.

Why this font and this source: the PDF must show real Japanese glyphs on any machine, so the font
is embedded (as a subset) in every file, and the app must find it wherever it runs. The wheel
``matplotlib-fontja`` (pinned in requirements-font.txt, installed with ``--no-deps``) ships ``ipaexg.ttf``, IPAexGothic 004.01 under
the OSI-approved IPA Font License, whose embedding permission (OS/2 fsType 0) allows it.
``make run`` therefore brings it, on Linux, macOS or Windows, with no
apt step and no root; a Debian font package would have needed both. Its outlines are TrueType,
which PDF viewers and printers handle as CIDFontType2 more widely than CFF outlines, and it covers
Latin, the maths signs used here (√ · × − ∞; it has no ≤, so the texts use ≦ or words) and JIS X 0213, so one font serves both languages.

The package's Python module imports matplotlib; it is never imported here, only located, and
the package is installed without its dependencies.
"""

from __future__ import annotations

import importlib.util
from functools import cache
from pathlib import Path

FONT_PACKAGE = "matplotlib_fontja"
FONT_FILE = ("fonts", "ipaexg.ttf")
FONT_FAMILY = "IPAexGothic"


class FontMissingError(RuntimeError):
    """The font package is not installed; the app shows ``worksheet.err_font``."""


@cache
def japanese_font_path() -> Path:
    """Where ``ipaexg.ttf`` is, found without importing (and so without loading matplotlib)."""
    spec = importlib.util.find_spec(FONT_PACKAGE)
    locations = spec.submodule_search_locations if spec is not None else None
    if locations:
        for folder in locations:
            path = Path(folder).joinpath(*FONT_FILE)
            if path.is_file():
                return path
    raise FontMissingError(
        f"the Japanese font ({FONT_PACKAGE}) is not installed: run pip install -r requirements.txt"
    )
