"""The core package's lazy public names (issue 6: ``import attention_core`` under 100 ms)."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import attention_core

ROOT = Path(__file__).resolve().parent.parent


def test_every_public_name_is_the_submodules_own_object():
    assert sorted(attention_core.__all__) == sorted(attention_core._EXPORTS)
    for name, module in attention_core._EXPORTS.items():
        defined = getattr(importlib.import_module(f"attention_core.{module}"), name)
        assert getattr(attention_core, name) is defined, name
    assert set(attention_core.__all__) <= set(dir(attention_core))


def test_unknown_names_still_raise_attribute_error():
    try:
        attention_core.no_such_step  # noqa: B018
    except AttributeError as err:
        assert "no_such_step" in str(err)
    else:
        raise AssertionError("expected AttributeError")


def test_importing_the_package_does_not_load_numpy_until_a_name_is_used():
    code = (
        "import sys, attention_core; before = 'numpy' in sys.modules; "
        "from attention_core import softmax; print(before, 'numpy' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True"]
