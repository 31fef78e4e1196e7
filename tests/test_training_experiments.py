"""The five experiments' conclusions: every branch from numbers (real tiny results from the core, then
the same results with a field changed), and the page drawing each result in both languages."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from apptest_pages import charts, open_page, texts

from attention_core.training import experiments as X
from attention_ui.i18n import catalog
from attention_ui.training import cached
from attention_ui.training import experiments_view as V


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


def test_sqrt_conclusions(results):
    r = results["sqrt_dk"]
    big = [
        dataclasses.replace(s, grad_scaled=2.0, grad_unscaled=1.0, loss_scaled=1.0, loss_unscaled=2.0)
        for s in r.seeds
    ]
    assert keys(V.sqrt_conclusions(dataclasses.replace(r, seeds=tuple(big)))) == [
        "training.x_sqrt_grad_all", "training.x_sqrt_loss_all"]  # fmt: skip
    mixed = [big[0], dataclasses.replace(big[1], grad_scaled=0.5, loss_scaled=3.0)]
    found = V.sqrt_conclusions(dataclasses.replace(r, seeds=tuple(mixed)))
    assert keys(found) == ["training.x_sqrt_grad_some", "training.x_sqrt_loss_weak"]
    assert found[0][1]["larger"] == 1 and found[0][1]["lo"] == "0.5" and found[1][1]["lower"] == 1


def test_leaky_conclusions(results):
    r = results["leaky_mask"]
    good = dataclasses.replace(
        r.causal,
        final_loss=1.0,
        generation=dataclasses.replace(r.causal.generation, accuracy=0.1, follows=0.9),
    )
    leak = dataclasses.replace(
        r.leaky,
        final_loss=0.01,
        generation=dataclasses.replace(r.leaky.generation, accuracy=0.2, follows=0.2),
    )
    assert (
        keys(V.leaky_conclusions(dataclasses.replace(r, causal=good, leaky=leak)))[1]
        == "training.x_leaky_expected"
    )
    # judged by reading like the text, not by the same-place share (the leaky one's 0.2 > 0.1 above)
    worse = dataclasses.replace(leak, final_loss=2.0)  # the leaky model did not reach the lower loss
    assert (
        keys(V.leaky_conclusions(dataclasses.replace(r, causal=good, leaky=worse)))[1]
        == "training.x_leaky_unexpected"
    )


def test_heads_conclusions(results):
    r = results["heads_specialise"]
    split = dataclasses.replace(
        r, previous_score=np.array([0.9, 0.1]), first_score=np.array([0.1, 0.8]), accuracy=0.95
    )
    found = V.heads_conclusions(split)
    assert keys(found) == ["training.x_heads_split"] and (found[0][1]["hp"], found[0][1]["hf"]) == (0, 1)
    same = dataclasses.replace(split, first_score=np.array([0.7, 0.1]), accuracy=0.5)
    assert keys(V.heads_conclusions(same)) == ["training.x_heads_same", "training.x_heads_weak"]


def test_induction_conclusions(results):
    r = results["induction_layers"]
    strong = dataclasses.replace(
        r,
        one=dataclasses.replace(r.one, accuracy=0.2),
        two=dataclasses.replace(r.two, accuracy=0.95, induction=np.array([[0.1], [0.8]]),
                                phase=X.PhaseChange(500, 3.0, 1.0)),
        induction_head=(1, 0), accuracy_without_previous_head=0.3,
    )  # fmt: skip
    assert keys(V.induction_conclusions(strong)) == [
        "training.x_induction_numbers", "training.x_induction_reached", "training.x_induction_circuit",
        "training.x_induction_phase"]  # fmt: skip
    weak = dataclasses.replace(
        strong, one=dataclasses.replace(strong.one, accuracy=0.95), accuracy_without_previous_head=0.94,
        two=dataclasses.replace(strong.two, induction=np.array([[0.1], [0.3]]), phase=X.PhaseChange(500, 3.0, 2.9)),
    )  # fmt: skip
    assert keys(V.induction_conclusions(weak)) == [
        "training.x_induction_numbers", "training.x_induction_not_reached", "training.x_induction_no_gap",
        "training.x_induction_circuit_weak", "training.x_induction_no_phase"]  # fmt: skip


def test_positions_conclusions(results):
    r = results["positions"]
    runs = [dataclasses.replace(x, accuracy=0.99 if x.positions else 0.2, equivariance_error=0.0 if not x.positions
                                else 1.0) for x in r.runs]  # fmt: skip
    found = V.positions_conclusions(dataclasses.replace(r, runs=tuple(runs)))
    assert keys(found) == [
        "training.x_positions_gap",
        "training.x_positions_gap",
        "training.x_positions_equivariant",
    ]
    broken = [dataclasses.replace(x, accuracy=0.5, equivariance_error=0.1) for x in r.runs]
    found = V.positions_conclusions(dataclasses.replace(r, runs=tuple(broken)))
    assert (
        keys(found)[0] == "training.x_positions_no_gap"
        and keys(found)[-1] == "training.x_positions_not_equivariant"
    )


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
    shown = charts(at, "tr_chart_")
    for name in (
        "x_sqrt",
        "x_sqrt_grad",
        "x_leaky",
        "x_heads_maps",
        "x_heads_lost",
        "x_induction",
        "x_positions",
    ):
        assert name in shown, name
    page = texts(at)
    for name, result in results.items():
        key, values = V.conclusions(name, result)[0]
        assert msgs[key].split("{")[0][:12] in page, (name, key)
    assert not [
        b for b in at.button if b.key and b.key.startswith("tr_x_") and not b.key.startswith("tr_x_stop")
    ]
