"""Make the repository root importable (``attention_core``, ``attention_ui``) under ``.venv/bin/pytest``."""

import functools
import re
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

# The `models` marker (pyproject.toml): every test of a file that looks for the pretrained weights
# (`make model`), i.e. calls an `is_available()` or importorskips gguf, tokenizers or safetensors.
# `make check` leaves these files out (loading and running the real models is most of their time);
# `make test` runs them. Read from the file's text, so that a new model test file is marked by
# following the house's way of skipping without the weights, with nothing to remember.
_NEEDS_WEIGHTS = re.compile(r"is_available\(|importorskip\(\s*\"(gguf|tokenizers|safetensors)\"")


@functools.cache
def _needs_weights(path: Path) -> bool:
    return path.suffix == ".py" and bool(_NEEDS_WEIGHTS.search(path.read_text(encoding="utf-8")))


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if _needs_weights(item.path):
            item.add_marker(pytest.mark.models)
