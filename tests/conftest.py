"""Make the repository root importable (``attention_core``, ``attention_ui``) under ``.venv/bin/pytest``."""

import sys
from pathlib import Path

ROOT = str(Path(__file__).resolve().parent.parent)
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

# .streamlit/config.toml hides error details from users (showErrorDetails = "none"); AppTest reads
# the same config, so tests would see only redacted messages. Show them in full under test.
from streamlit import config as _st_config  # noqa: E402

_st_config.set_option("client.showErrorDetails", "full")

import pytest  # noqa: E402

# The shared AppTest helpers (open a page, read its charts and texts) assert; have pytest explain them.
pytest.register_assert_rewrite("tests.apptest_pages")
