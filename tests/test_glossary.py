"""Every Japanese catalog follows the glossary (``attention_ui/locales/glossary_ja.json``): one term
per concept, no stray English, no English in LaTeX ``\\text{...}``, one typography.

The catalogs are globbed, so a catalog added later is checked without touching this file. Each
test reports every offending key at once.
"""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import ja_text_rules as rules
import pytest

ROOT = Path(__file__).resolve().parent.parent
LOCALES = ROOT / "attention_ui" / "locales"
JA_FILES = sorted((LOCALES / "ja").glob("*.json"))


def messages(path: Path) -> dict[str, str]:
    return json.loads(path.read_text(encoding="utf-8"))


def report(check, path: Path) -> list[str]:
    out = []
    sample_input = set(rules.glossary()["sample_input_keys"])
    for key, text in messages(path).items():
        if key in sample_input and check is rules.latin_problems:
            continue  # a sentence the page starts with is input, not interface text
        out += [f"{path.stem}.{key}: {p}" for p in check(text)]
    return out


def test_the_glossary_is_well_formed():
    g = rules.glossary()
    assert set(g["rules"]) >= {"latin", "spacing", "punctuation", "layers", "quiz"}
    concepts = [t["concept"] for t in g["terms"]]
    assert len(concepts) == len(set(concepts)), "a concept is listed twice"
    for term in g["terms"]:
        assert term["ja"], term
        for pattern in term.get("forbidden_regex", []):
            re.compile(pattern)
        # a term must not forbid itself
        assert not any(v in term["ja"] for v in term.get("forbidden", [])), term["concept"]
    assert {"注意重み", "自己注意", "softmax"} <= {t["ja"] for t in g["terms"]}


def test_every_ja_catalog_is_covered():
    assert len(JA_FILES) >= 9
    assert {p.stem for p in JA_FILES} == {p.stem for p in (LOCALES / "en").glob("*.json")}


@pytest.mark.parametrize("path", JA_FILES, ids=lambda p: p.stem)
def test_one_term_per_concept(path):
    problems = report(rules.forbidden_problems, path)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("path", JA_FILES, ids=lambda p: p.stem)
def test_no_stray_english(path):
    problems = report(rules.latin_problems, path)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("path", JA_FILES, ids=lambda p: p.stem)
def test_no_english_in_latex_text(path):
    problems = [p for p in report(rules.latin_problems, path) if "LaTeX" in p]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("path", JA_FILES, ids=lambda p: p.stem)
def test_spacing_around_numbers_and_latin(path):
    problems = report(rules.spacing_problems, path)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("path", JA_FILES, ids=lambda p: p.stem)
def test_full_width_punctuation(path):
    problems = report(rules.punctuation_problems, path)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_bold_markers_render(lang):
    problems = []
    for path in sorted((LOCALES / lang).glob("*.json")):
        problems += report(rules.emphasis_problems, path)
    assert not problems, "\n".join(problems)


# --- the rules themselves can fail -------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "check"),
    [
        ("注意の重みを見る", rules.forbidden_problems),
        ("Attention の重み", rules.forbidden_problems),
        ("ソフトマックスで正規化", rules.forbidden_problems),
        ("第 {layer} 層", rules.forbidden_problems),
        ("第0層", rules.forbidden_problems),
        ("アテンション重み", rules.forbidden_problems),
        ("惜しい。正解は", rules.forbidden_problems),
        ("この layer の出力", rules.latin_problems),
        ("$\\text{memory} = n^2$", rules.latin_problems),
        ("$\\mathrm{Output} = XW$", rules.latin_problems),
        ("\\underbrace{[2 \\times 3]}_{\\mathrm{Output}:\\ n \\times d_\\text{model}}", rules.latin_problems),
        ("$E_{\\text{word}} + E_{\\text{pos}}$", rules.latin_problems),
        ("Linear Attention：カーネル", rules.latin_problems),
        ("2倍になる", rules.spacing_problems),
        ("n が{n}トークン", rules.spacing_problems),
        ("softmaxの前", rules.spacing_problems),
        ("マスク: なし", rules.punctuation_problems),
        ("本当?", rules.punctuation_problems),
        ("キー数 (n のとき)", rules.punctuation_problems),
        ("**文（X）**を使う", rules.emphasis_problems),
    ],
)
def test_the_rules_catch_a_violation(text, check):
    assert check(text), text


@pytest.mark.parametrize(
    "text",
    [
        "注意重みは softmax の出力で、$\\operatorname{softmax}(QK^\\top/\\sqrt{d_k})$ と書きます。",
        "クロスアテンションでは K と V を文 2 から作ります。",
        "層 {layer} のヘッド {h}：FlashAttention と Ring Attention、GQA。",
        "`python -m attention_core example` と同じ [PAD] の数は {pads} 個です。",
        "$\\text{メモリ} = n^2 \\times 2\\ \\text{バイト}$（FP16）",
        "d_model = 16、d_k = d_v = 8 のとき XW の積和は 1e-10 未満",
        "マスク「{kind}」では",
    ],
)
def test_the_rules_accept_good_japanese(text):
    for check in (
        rules.forbidden_problems,
        rules.latin_problems,
        rules.spacing_problems,
        rules.punctuation_problems,
        rules.emphasis_problems,
    ):
        assert not check(text), (text, check.__name__, check(text))


# --- issue 24: terms in backticks, MQA expanded, every new term covered ------------------------------


@pytest.mark.parametrize("path", JA_FILES, ids=lambda p: p.stem)
def test_no_term_in_backticks(path):
    problems = report(rules.code_term_problems, path)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("path", JA_FILES, ids=lambda p: p.stem)
def test_mqa_is_expanded_in_every_catalog_that_uses_it(path):
    texts = messages(path).values()
    if any("MQA" in text for text in texts):
        assert any(
            "Multi-Query Attention（MQA）" in text for text in texts
        )  # the glossary's order (issue 33)


@pytest.mark.parametrize(
    ("text", "check"),
    [
        ("`RoPE` の前", rules.code_term_problems),
        ("`attention sink` と呼ばれます", rules.code_term_problems),
        ("`SmolLM2-135M-Instruct` を動かします", rules.code_term_problems),
        ("デコーダでよく見られる型で", rules.forbidden_problems),
        ("キー・バリューヘッド数 g", rules.forbidden_problems),
        ("キーとバリューのヘッドを減らす", rules.forbidden_problems),
        ("残差の流れにもよります", rules.forbidden_problems),
        ("学習で得る表はちょうど L 行", rules.forbidden_problems),
        ("回転位置埋め込み、RoPE", rules.forbidden_problems),
        ("生徒数", rules.forbidden_problems),
    ],
)
def test_the_issue_24_rules_catch_a_violation(text, check):
    assert check(text), text


@pytest.mark.parametrize(
    "text",
    [
        "`make run` で起動",
        "`Esc` で戻る",
        "`config.json` の値",
        "従来型と加法型と Llama 型",
        "RoPE（回転位置埋め込み）",
    ],
)
def test_the_issue_24_rules_accept_good_japanese(text):
    assert not rules.code_term_problems(text) and not rules.forbidden_problems(text), text


@pytest.mark.parametrize("path", JA_FILES, ids=lambda p: p.stem)
def test_japanese_sample_sentences_have_no_spaces_between_words(path):
    """Japanese is written without spaces between words; a sample sentence that has them teaches the
    wrong thing (the block and cost labs' did: 猫 は 疲れて いた)."""
    keys = set(rules.glossary()["sample_input_keys"])
    between = re.compile(rules.JA_CHAR + " +" + rules.JA_CHAR)
    bad = [f"{path.stem}.{k}: {v!r}" for k, v in messages(path).items() if k in keys and between.search(v)]
    assert not bad, "\n".join(bad)


# --- issue 33: one name per thing on the decoder, heads, ring and class pages ------------------------


@pytest.mark.parametrize(
    "text",
    [
        "発表モードで映します",
        "実行中の最大値 m",
        "実行中の状態：a",
        "割った後のスコアは",
        "最初のトークンを含む窓",
        "google/gemma-3-270m（指示チューニング版ではありません）",
        "Gemma Terms of Use（Gemma の利用規約）のもとで",
        "Gemma の利用規約",
        "開始トークン \\<bos\\> から始まります",
        "`Apache-2.0` ではなく",
        "参加している学生",
        "ブラウザーで開きます",
        "サーバーに送ります",
        "プロジェクターに映します",
        "Mamba の選択的という考え方",
        "Mamba の走査",
        "デバイスを輪につなぎます",
        "Striped Attention（Brandon ら 2023）",
        "Multi-Query Attention（MQA） でそれが",
        "MQA（Multi-Query Attention）は",
        "モデルが読むあなたの文",
    ],
)
def test_the_issue_33_rules_catch_a_violation(text):
    assert rules.forbidden_problems(text), text


@pytest.mark.parametrize(
    "text",
    [
        "プレゼンモードで映します",
        "これまでの最大値 m と途中の状態",
        "スケーリング後のスコアは",
        "最初のトークンを含むウィンドウ",
        "google/gemma-3-270m（指示調整なし）で、Apache-2.0 ではなく Gemma 利用規約のもとで",
        "文頭トークン `<bos>`",
        "参加している受講者がブラウザで開き、サーバに送り、プロジェクタに映します",
        "Mamba の選択性という考え方とスキャン",
        "デバイスをリングにつなぎます（Brandon et al. 2023）",
        "Multi-Query Attention（MQA）でそれが",
        "入力した文",
    ],
)
def test_the_issue_33_rules_accept_good_japanese(text):
    assert not rules.forbidden_problems(text) and not rules.latin_problems(text), text


# --- issue 41: templates as the learner reads them, filled with the words a page puts in them ------------

# catalog -> key -> placeholder -> the keys (same catalog) whose words fill it; other placeholders get "0"
FILLED = {
    "training": {
        "x_generated": {"model": ["x_model_causal", "x_model_none"]},
        "x_acc_visible": {"model": ["x_model_causal", "x_model_none"]},
        "x_acc_prefix": {"model": ["x_model_causal", "x_model_none"]},
        "x_weight_on": {"model": ["x_model_causal", "x_model_none"], "what": ["x_future_weight", "x_next_weight"]},
        **{f"x_positions_{v}": {"task_name": ["task_reverse", "task_sort"]} for v in ("gap_gap", "gap_no_gap")},
        **{k: {"guess": [f"pattern_{p}" for p in ("previous", "self", "first", "induction", "spread")]}
           for k in ("reveal_right", "reveal_wrong")},
        "reveal_learned": {"pattern": [f"pattern_{p}" for p in ("previous", "self", "first", "induction", "spread")]},
        **{k: {"acc_name_lower": ["acc_name_lower", "acc_name_text_lower"]}
           for k in ("summary", "summary_one", "summary_stopped")},
        "err_range": {"name": [f"name_{n}" for n in ("layers", "heads", "d_model", "d_k", "steps", "seed", "batch")]},
    },
}  # fmt: skip


def filled(template: str, words: dict[str, list[str]], catalog: dict[str, str]) -> list[str]:
    """``template`` with every combination of the words its page fills in (other placeholders: "0")."""
    names = list(words)
    out = []
    for combo in itertools.product(*(words[n] for n in names)):
        values = {n: catalog[k] for n, k in zip(names, combo, strict=True)}
        out.append(rules.PLACEHOLDER.sub(lambda m, v=values: v.get(m.group(1), "0"), template))
    return out


FILLED_CHECKS = (rules.forbidden_problems, rules.latin_problems, rules.spacing_problems, rules.punctuation_problems,
                 rules.word_space_problems)  # fmt: skip


@pytest.mark.parametrize("name", sorted(FILLED))
def test_filled_templates_follow_the_rules(name):
    catalog = messages(LOCALES / "ja" / f"{name}.json")
    problems = []
    for key, words in FILLED[name].items():
        for text in filled(catalog[key], words, catalog):
            problems += [
                f"{name}.{key} filled: {p} in {text!r}" for check in FILLED_CHECKS for p in check(text)
            ]
    assert not problems, "\n".join(problems)


def test_the_filled_check_catches_a_gap_between_words():
    """The template issue 41 found: 「マスク {mask} での生成：」 reads 「マスク 因果 での生成：」 once filled."""
    catalog = {"mask_causal": "因果", "mask_none": "なし（漏れあり：答えが見える）"}
    texts = filled("マスク {mask} での生成：", {"mask": ["mask_causal", "mask_none"]}, catalog)
    assert all(rules.word_space_problems(t) for t in texts)
    assert not rules.spacing_problems("マスク {mask} での生成：")  # the template alone passes the old rules
    assert rules.punctuation_problems("**マスク。** マスクされたセル") and not rules.punctuation_problems(
        "**マスク**。マスクされたセル"
    )
