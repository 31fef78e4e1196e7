"""The training lab's words, read as a strict lecturer would (issue 41): other pages named as the
navigation names them, the reference text cited only for what it says, the intro naming the parts
of the model the playground does not have, the induction score's queries said as measured, and
every verdict sentence kept apart from the explanations that only the experiment's numbers back."""

from __future__ import annotations

import re

import pytest

from attention_core.training import verdicts as VD
from attention_ui.i18n import catalog

LANGS = ("en", "ja")


def training(lang: str) -> dict[str, str]:
    return {k.removeprefix("training."): v for k, v in catalog(lang).items() if k.startswith("training.")}


@pytest.mark.parametrize("lang", LANGS)
def test_other_pages_are_named_as_the_navigation_names_them(lang):
    nav = {v for k, v in catalog(lang).items() if k.startswith("app.nav_")}
    every = "\n".join(v for k, v in catalog(lang).items())
    assert not re.search(r"positions lab|block lab|位置ラボ|位置のラボ|ブロックラボ|ブロックのラボ", every)
    text = "\n".join(training(lang).values())
    names = {
        next(x for x in q if x)
        for q in re.findall(r"the page “([^”]+)”|the (\w+) page|「([^」]+)」のページ", text)
    }
    assert len(names) == 3 and names <= nav, names - nav  # the block, heads and positions pages


@pytest.mark.parametrize("lang", LANGS)
def test_the_reference_text_is_cited_for_the_mask_before_the_softmax_only(lang):
    """The reference (000) puts the mask on the scores before the softmax, so a forbidden position
    gets probability 0; it says nothing of what a leaky model learns or how it generates."""
    cites = {k for k, v in training(lang).items() if re.search(r"reference text|参考資料", v)}
    assert cites == {"x_leaky_causal_sealed"}
    text = training(lang)["x_leaky_causal_sealed"]
    assert ("before the softmax" in text and "exactly 0" in text) if lang == "en" else (
        "softmax の前" in text and "ちょうど 0" in text)  # fmt: skip
    assert "no future to read" not in "\n".join(training(lang).values())


@pytest.mark.parametrize(
    "lang, words",
    [("en", ("embeddings", "unembedding", "cross-entropy", "feed-forward", "LayerNorm", "does not have")),
     ("ja", ("埋め込み", "出力の射影", "交差エントロピー", "フィードフォワード層", "LayerNorm", "プレイグラウンドにない"))],
)  # fmt: skip
def test_the_intro_names_what_the_playground_does_not_have(lang, words):
    intro = training(lang)["intro"]
    assert all(w in intro for w in words), [w for w in words if w not in intro]
    assert "through every step of the playground)" not in intro


@pytest.mark.parametrize("lang", LANGS)
def test_the_induction_score_is_said_to_average_the_second_copy_only(lang):
    how = training(lang)["reveal_how"].format(n1=11, m=6, last=11)
    assert ("over the second copy's queries only (6 to 11)" in how) if lang == "en" else (
        "2 回目の区間のクエリ（6 から 11 まで）だけ" in how)  # fmt: skip


@pytest.mark.parametrize("lang", LANGS)
def test_one_word_for_the_sort_task_and_another_for_permuting(lang):
    t = training(lang)
    if lang == "ja":
        assert t["task_sort"] == "ソート" and "ソート" in t["x_h_positions"]
        assert "入れ替え" in t["x_explain_positions"] and not re.search("並べ替", "\n".join(t.values()))
        assert t["snapshot"] == "このステップの後"  # "after step", as in English
        assert (
            "順伝播" in t["intro"] and "順伝播" in t["explain_train"] and "順に計算" not in t["explain_train"]
        )
    else:
        assert t["task_sort"] == "sort" and t["snapshot"] == "After step"


@pytest.mark.parametrize("lang", LANGS)
def test_no_verdict_sentence_claims_a_cause_the_run_did_not_measure(lang):
    """The sentences that stated causes nothing measured (issue 41) are gone: the leaky model "reads
    the answer from the future" only with its weight on later positions shown, Adam's step size is
    not offered as a reason, and the phase change is called one only with its plateau and drop found."""
    t = training(lang)
    every = "\n".join(t.values())
    assert not re.search(r"Adam scales each weight|Adam は各重みの更新幅", every)
    assert not re.search(r"Olsson et al\. \(2022\) describe|Olsson et al\. \(2022\) の述べる", every)
    for verdict in VD.OUTCOMES["induction_layers"]:
        text = t[f"x_induction_{verdict}"]
        said = "a plateau, then a drop" in text or "停滞してから急降下" in text
        assert said == (verdict == "phase_plateau_drop"), verdict
