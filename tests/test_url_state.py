"""URL <-> playground state, without Streamlit: round trips, malformed values, unknown keys, hostile text."""

from __future__ import annotations

import urllib.parse

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_ui.playground.url_state import MAX_URL_TEXT, parse, serialise

FULL = {
    "pg_preset": "sentence",
    "pg_text": "the cat sat on the mat",
    "pg_max_tokens": 64,
    "pg_d_model": 24,
    "pg_heads": 3,
    "pg_auto_dims": False,
    "pg_d_k": 5,
    "pg_d_v": 7,
    "pg_mask": "causal+padding",
    "pg_pad": 2,
    "pg_scale": "custom",
    "pg_divisor": 2.718281828459045,
    "pg_seed": 12345,
    "pg_positional": False,
    "pg_tables": True,
    "pg_head": 2,
    "pg_all_heads": True,
    "pg_present": True,
    "pg_step": 7,
    "lang": "ja",
}


def through_a_url(params: dict[str, str]) -> dict[str, str]:
    """Encode as a real query string and decode again, as a browser would."""
    query = urllib.parse.urlencode(params)
    return dict(urllib.parse.parse_qsl(query, keep_blank_values=True))


def test_full_state_round_trips_through_a_real_query_string():
    params = serialise(FULL)
    assert params["mask"] == "causal+padding" and params["div"] == "2.718281828459045"
    parsed = parse(through_a_url(params))
    assert parsed.ignored == ()
    assert parsed.values == FULL


def test_only_what_matters_is_written():
    state = dict(FULL, pg_auto_dims=True, pg_scale="sqrt", pg_present=False, pg_all_heads=False)
    params = serialise(state)
    assert "all_heads" not in params  # the long-sentence switch only when it is on
    assert "d_k" not in params and "d_v" not in params  # automatic sizes
    assert "div" not in params  # not a custom divisor
    assert "step" not in params and "present" not in params  # not presenting
    assert params["scale"] == "sqrt" and params["text"] == "the cat sat on the mat"


def test_worked_example_does_not_write_the_sentence_settings():
    params = serialise(dict(FULL, pg_preset="example"))
    assert params["preset"] == "example"
    assert "text" not in params and "d_model" not in params and "seed" not in params
    assert params["lang"] == "ja"


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("d_model", "abc"),
        ("d_model", "0"),
        ("d_model", "100000"),
        ("d_model", "-4"),
        ("d_model", "1.5"),
        ("d_model", " 16"),
        ("d_model", "１６"),
        ("heads", "17"),
        ("seed", "2147483648"),
        ("pad", "99"),
        ("mask", "diagonal"),
        ("mask", "CAUSAL"),
        ("scale", "log"),
        ("div", "nan"),
        ("div", "inf"),
        ("div", "-2"),
        ("div", "0"),
        ("div", "1e400"),
        ("div", "."),
        ("pos", "maybe"),
        ("head", "16"),
        ("step", "0"),
        ("step", "12"),
        ("lang", "fr"),
        ("preset", "other"),
        ("text", ""),
        ("text", "x" * (MAX_URL_TEXT + 1)),
        ("text", "a\x00b"),
        ("max_tokens", "3"),
        ("max_tokens", "257"),
        ("d_model", "9" * 100),
    ],
)
def test_malformed_or_out_of_range_values_are_ignored_and_named(key, value):
    parsed = parse({key: value, "tables": "1"})
    assert parsed.ignored == (key,)
    assert parsed.values == {"pg_tables": True}


def test_unknown_keys_are_listed_and_valid_ones_still_used():
    parsed = parse({"utm_source": "mail", "heads": "4", "colour": "red"})
    assert parsed.values == {"pg_heads": 4}
    assert parsed.ignored == ("utm_source", "colour")


def test_repeated_parameter_uses_the_last_value_and_bad_shapes_are_ignored():
    assert parse({"seed": ["1", "2"]}).values == {"pg_seed": 2}
    assert parse({"seed": []}).ignored == ("seed",)
    assert parse({"seed": None}).ignored == ("seed",)
    assert parse({"seed": 5}).ignored == ("seed",)


def test_hostile_names_are_made_printable_and_short():
    parsed = parse({"<script>\x1b[31m" + "a" * 100: "1"})
    (name,) = parsed.ignored
    assert "\x1b" not in name and len(name) <= 30


@pytest.mark.parametrize(
    "text",
    [
        "<b>bold</b> & $x$",
        "猫がマットの上に座った。",
        "a+b=c&d=e#frag?x=1",
        "'; DROP TABLE x; --",
        "%00%zz",
        "🙂🏳️‍🌈",
    ],
)
def test_hostile_sentences_round_trip_verbatim(text):
    parsed = parse(through_a_url(serialise({"pg_text": text})))
    assert parsed.values == {"pg_text": text}


def test_long_sentences_are_cut_to_what_a_url_can_carry():
    params = serialise({"pg_text": "w " * MAX_URL_TEXT})
    assert len(params["text"]) == MAX_URL_TEXT
    assert parse(params).values["pg_text"] == params["text"]


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(max_size=12), st.one_of(st.text(max_size=30), st.lists(st.text(max_size=5)))))
def test_any_parameters_never_raise(params):
    parsed = parse(params)
    assert len(parsed.values) + len(parsed.ignored) == len(params)
    # whatever was accepted serialises back to a URL that parses to the same values
    again = parse(serialise(dict(parsed.values)))
    for key, value in again.values.items():
        assert parsed.values[key] == value


PRETRAINED = {
    "pg_weights": "pretrained",
    "pg_pt_layer": 3,
    "pg_pt_hide_special": True,
    "pg_text": "the cat sat on the mat",
    "pg_head": 5,
}


def test_pretrained_view_round_trips_through_a_real_query_string():
    params = serialise(PRETRAINED)
    assert (params["weights"], params["layer"], params["hide"], params["head"]) == (
        "pretrained",
        "3",
        "1",
        "5",
    )
    parsed = parse(through_a_url(params))
    assert parsed.ignored == ()
    assert parsed.values == PRETRAINED


def test_random_weights_leave_the_pretrained_settings_out_of_the_url():
    params = serialise(dict(PRETRAINED, pg_weights="random"))
    assert "weights" not in params and "layer" not in params and "hide" not in params
    assert params["head"] == "5"


def test_pretrained_view_keeps_its_sentence_even_with_the_example_preset_chosen():
    params = serialise(dict(PRETRAINED, pg_preset="example"))
    assert params["text"] == "the cat sat on the mat" and params["weights"] == "pretrained"


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("weights", "trained"),
        ("weights", "PRETRAINED"),
        ("weights", ""),
        ("layer", "6"),
        ("layer", "-1"),
        ("layer", "2.0"),
        ("layer", "x"),
        ("hide", "perhaps"),
        ("hide", ""),
    ],
)
def test_malformed_pretrained_values_are_ignored_and_named(key, value):
    parsed = parse({key: value, "weights": "pretrained"} if key != "weights" else {key: value})
    assert parsed.ignored == (key,)
    assert parsed.values == ({} if key == "weights" else {"pg_weights": "pretrained"})


# --- the URL's names come from the playground's table (issue 46, ask 1) ---------------------------------


def _a_value(s):
    """A value of setting ``s`` other than its default (so a URL written for it says something)."""
    if s.choices:
        return next(c for c in s.choices if c != s.default)
    if isinstance(s.default, bool) or s.name == "present":
        return not s.default if isinstance(s.default, bool) else True
    if s.bounds:
        value = s.bounds[1]
        return float(value) if isinstance(s.default, float) else int(value)
    return "a sentence of the table's"


def test_every_setting_with_a_url_name_is_read_and_written_under_that_name():
    from attention_ui.playground.settings import TABLE

    named = [s for s in TABLE if s.url]
    assert {s.url for s in named} >= {"text", "d_model", "heads", "head", "step", "weights", "layer", "hide"}
    # the state that makes every parameter worth writing: hand-set d_k/d_v, a custom divisor, presenter
    # mode, pretrained weights (the layer and [CLS]/[SEP] toggle)
    view = {TABLE.key(s.name): _a_value(s) for s in named}
    view.update({TABLE.key("auto_dims"): False, TABLE.key("scale"): "custom", TABLE.key("present"): True,
                 TABLE.key("weights"): "pretrained", TABLE.key("preset"): "sentence", TABLE.key("step"): 3})  # fmt: skip
    written = serialise(view)
    for s in named:
        assert s.url in written, f"the URL code does not write {s.name!r} as ?{s.url}="
    parsed = parse(through_a_url(written))
    assert parsed.ignored == ()
    for s in named:
        key = TABLE.key(s.name)
        assert parsed.values.get(key) == view[key], f"?{s.url}= is not read back into {key}"


def test_a_url_name_the_url_code_cannot_read_fails_when_the_parameters_are_built():
    from attention_ui.playground.url_state import params_of
    from attention_ui.settings_table import Setting, Table

    table = Table("zu", Setting("count", 3, bounds=(1, 9), url="n"), Setting("odd", url="odd"), kit=False)
    with pytest.raises(ValueError, match="cannot read 'odd'"):
        params_of(table)
    good = Table("zv", Setting("count", 3, bounds=(1, 9), url="n"), Setting("on", False, url="on"), kit=False)
    assert [(p.url, p.state) for p in params_of(good)] == [
        ("n", "zv_count"),
        ("on", "zv_on"),
        ("lang", "lang"),
    ]
