"""The constant scripts app.py puts on every page (touch, narrow screens, keyboard) are filled in:
no placeholder is left (a leftover ``__NAME__`` is a JavaScript ReferenceError that stops the whole
script, which happened once), and the one text they carry is escaped as a JavaScript string."""

from __future__ import annotations

import json
import re

import pytest

from attention_ui import chart_keys, narrow_fit, narrow_screen, touch

PLACEHOLDER = re.compile(r"__[A-Z][A-Z_]*__")


@pytest.mark.parametrize(
    "script",
    [
        touch.touch_script(),
        narrow_fit.fit_script(),
        narrow_fit.fit_css(),
        narrow_screen.sidebar_script(),
        chart_keys.keys_script("Chart toolbar"),
    ],
    ids=["touch", "narrow_fit", "narrow_fit_css", "narrow_screen", "chart_keys"],
)
def test_no_placeholder_is_left(script: str) -> None:
    assert not PLACEHOLDER.findall(script)


def test_fit_script_carries_its_numbers() -> None:
    script = narrow_fit.fit_script()
    assert f"MIN_ZOOM = {narrow_fit.MIN_ZOOM!r}, SLACK_PX = {narrow_fit.SLACK_PX}" in script
    assert f"const FRAME = {json.dumps(narrow_fit.TABLE_FRAME)};" in script


def test_toolbar_name_is_a_javascript_string() -> None:
    name = 'a "quoted" </script> name'
    script = chart_keys.keys_script(name)
    assert 'window.__alToolbarName = "a \\"quoted\\" <\\/script> name";' in script
    assert script.count("</script>") == 1  # only the element's own end
