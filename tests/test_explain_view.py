"""The playground's cell explainer (attention_ui/playground/explain_view.py): the script that scrolls to
its panel takes only numbers and a fixed name, and a stale cell label from the browser is no chosen cell.
(The explainer on the page is tested in test_app_playground.py.)"""

from __future__ import annotations

import pytest

from attention_ui.playground import explain_view


def test_scroll_script_fills_in_only_numbers_and_a_fixed_panel_name():
    a = explain_view.scroll_script("cell", 4)
    assert "const CLICK = 4," in a and ".st-key-pg_cell_panel" in a
    assert explain_view.scroll_script("cell", 5) != a  # a new click runs it again
    with pytest.raises(ValueError):
        explain_view.scroll_script("<img>", 1)


@pytest.mark.parametrize("stale", ["2 · sat", None, True, 1.0])
def test_a_stale_cell_label_from_the_browser_is_no_chosen_cell(stale):
    """The export menu reads the chosen cell before the selectboxes are drawn; the browser may still
    send the label of a cell of the previous sentence (seen in Chromium: "2 · sat" stopped the page)."""
    opened = {explain_view.CELL_OPEN: True, explain_view.Q_KEY: 3, explain_view.K_KEY: 1}
    assert explain_view.chosen_cell(opened) == (3, 1)
    assert explain_view.chosen_cell({**opened, explain_view.CELL_OPEN: False}) is None
    assert explain_view.chosen_cell({**opened, explain_view.Q_KEY: stale}) is None
    assert explain_view.chosen_cell({**opened, explain_view.K_KEY: stale}) is None
    assert explain_view.chosen_cell({explain_view.CELL_OPEN: True}) == (0, 0)  # nothing chosen yet
