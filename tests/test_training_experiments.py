"""The five experiments' conclusions on the page: every verdict the core can give has its own sentence
in both languages, filled with the numbers it tested (made-up results, tests/training/test_verdicts.py),
and the page draws each real (tiny) result with its conclusion in both languages."""

from __future__ import annotations

import dataclasses

import pytest
from apptest_pages import charts, open_page, texts

from attention_core.training import experiments as X
from attention_core.training import verdicts as VD
from attention_ui.i18n import catalog
from attention_ui.training import cached
from attention_ui.training import experiments_view as V
from tests.training.test_verdicts import HEADS, INDUCTION, LEAKY, SQRT, _positions

MADE_UP = {"sqrt_dk": SQRT, "leaky_mask": LEAKY, "heads_specialise": HEADS, "induction_layers": INDUCTION,
           "positions": _positions()}  # fmt: skip


@pytest.fixture(scope="module")
def results():
    """Each experiment at a tiny size (a few steps): real objects of the core's result types."""
    return {
        "sqrt_dk": X.sqrt_dk(X.SqrtDkSettings(d_k=8, steps=4, seeds=(0, 1))),
        "leaky_mask": X.leaky_mask(X.LeakySettings(text="abcabd", steps=4)),
        "heads_specialise": X.heads_specialise(X.HeadsSettings(steps=4, d_model=8)),
        "induction_layers": X.induction_layers(X.InductionSettings(steps=4, d_model=8, heads=1)),
        "positions": X.positions(X.PositionsSettings(steps=4)),
    }


def keys(found) -> list[str]:
    return [k for k, _ in found]


def _values(name: str) -> dict:
    """Every placeholder value the conclusions of ``name`` fill (the union over its sentences)."""
    out = {}
    for _, values in V.conclusions(name, MADE_UP[name]):
        out |= values
    return out


@pytest.mark.parametrize("lang", ["en", "ja"])
@pytest.mark.parametrize("name", V.NAMES)
def test_every_verdict_has_its_own_sentence(name, lang):
    msgs = catalog(lang)
    values = V.fill(lambda key, **kw: msgs[key].format(**kw), _values(name) | {"err": "1e-15"})
    sentences = set()
    for verdict in VD.OUTCOMES[name]:
        text = msgs[f"training.x_{V.PREFIX[name]}_{verdict}"].format(**values)
        assert "{" not in text and "nan" not in text, (verdict, text)
        sentences.add(text)
    assert len(sentences) == len(VD.OUTCOMES[name])  # no two verdicts read the same


def test_conclusions_follow_the_verdicts():
    assert keys(V.conclusions("sqrt_dk", SQRT)) == [
        "training.x_sqrt_grad_saturated", "training.x_sqrt_speed_faster", "training.x_sqrt_final_both_low"]  # fmt: skip
    assert keys(V.conclusions("leaky_mask", LEAKY)) == [
        "training.x_leaky_numbers", "training.x_leaky_reading_reads_future", "training.x_leaky_generation_full_works",
        "training.x_leaky_causal_sealed"]  # fmt: skip
    assert keys(V.conclusions("heads_specialise", HEADS)) == [
        "training.x_heads_split_confirmed", "training.x_heads_accuracy_reached"]  # fmt: skip
    assert keys(V.conclusions("induction_layers", INDUCTION)) == ["training.x_induction_numbers"] + [
        f"training.x_induction_{v}" for v in VD.induction_verdicts(INDUCTION)]  # fmt: skip
    assert keys(V.conclusions("positions", _positions())) == [
        "training.x_positions_gap_gap", "training.x_positions_baseline_at", "training.x_positions_gap_gap",
        "training.x_positions_baseline_at", "training.x_positions_equivariant"]  # fmt: skip


def _say(name, result, lang="en") -> str:
    msgs = catalog(lang)
    out = []
    for key, values in V.conclusions(name, result):
        out.append(msgs[key].format(**V.fill(lambda k, **kw: msgs[k].format(**kw), values)))
    return "\n".join(out)


def test_the_sentences_state_the_numbers_they_tested():
    sqrt = _say("sqrt_dk", SQRT)
    assert (
        "steps 23, 27, 29" in sqrt
        and "steps 44, 77, 49" in sqrt
        and "in at most 0.75 times the undivided run's steps" in sqrt
    )
    never = dataclasses.replace(SQRT, seeds=(dataclasses.replace(SQRT.seeds[0], steps_unscaled=None),))
    assert "steps > 150" in _say("sqrt_dk", never)
    leaky = _say("leaky_mask", LEAKY)
    assert (
        "positions 0 to 14 put 0.60 of their weight on later positions on average (0.20 on the next" in leaky
    )
    assert "100.0 %" in leaky and "30.0 %" in leaky
    assert "the last position, 15," in leaky and "positions 3 to 14" in leaky
    heads = _say("heads_specialise", HEADS)
    assert "Head 0 takes the previous token (mean weight 0.99, against 0.11" in heads
    induction = _say("induction_layers", INDUCTION)
    assert "from step 70 to step 250" in induction and "between steps 280 and 330" in induction
    assert "a query at position 10 is in the repeat only when the segment is 10 long" in induction
    assert "(head 0: a score of 0.5 or more" in induction
    many = dataclasses.replace(INDUCTION, previous_heads=(0, 2))
    assert "(heads 0, 2: a score of 0.5 or more" in _say("induction_layers", many)
    assert "（ヘッド 0, 2：スコア 0.5 以上" in _say("induction_layers", many, "ja")
    positions = _say("positions", _positions())
    assert "the best a model can expect on these inputs is 27.0 %, and it gets 27.0 %" in positions


def test_a_stopped_experiment_concludes_nothing(results):
    r = results["sqrt_dk"]
    assert keys(V.conclusions("sqrt_dk", dataclasses.replace(r, stopped=True))) == ["training.x_stopped"]
    h = results["heads_specialise"]
    stopped_run = dataclasses.replace(h.run, stopped=True)
    assert keys(V.conclusions("heads_specialise", dataclasses.replace(h, run=stopped_run))) == [
        "training.x_stopped"
    ]


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_page_draws_each_result_with_its_conclusion(results, lang):
    msgs = catalog(lang)
    runner = cached.runner()
    text = msgs["training.default_text"]
    for name, result in results.items():
        runner._remember((name, V.settings_for(name, text)), result)  # as if this experiment had run
    at = open_page("app_pages/training.py", lang=lang)
    shown = charts(at, "training_chart_")
    for name in ("x_sqrt", "x_sqrt_grad", "x_leaky", "x_leaky_positions", "x_leaky_next", "x_heads_maps",
                 "x_heads_lost", "x_induction", "x_positions"):  # fmt: skip
        assert name in shown, name
    page = texts(at)
    for name, result in results.items():
        for key, _ in V.conclusions(name, result):
            assert msgs[key].split("{")[0][:12] in page, (name, key)
    per_seed = next(df.value for df in at.dataframe if msgs["training.x_col_grad_scaled"] in df.value.columns)
    assert len(per_seed) == 2 and len(per_seed.columns) == 8  # one row per seed
    assert not [
        b
        for b in at.button
        if b.key and b.key.startswith("training_x_") and not b.key.startswith("training_x_stop")
    ]
