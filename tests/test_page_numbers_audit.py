"""The audit of the numbers a page shows, enforced (issue 28): a numeric message, chart or table that a
page shows without a test that reads it fails here.

What a page shows is derived from its code, not listed by hand: the page file and the
``attention_ui`` modules it imports (the shared kit, figures and i18n excepted) are parsed, and every
catalog key they name is collected, directly (``"decoder.gqa_memory"``), through an f-string
(``f"decoder.layer_option_{kind}"`` stands for every key it can form), through ``model_text(t, name,
"key")`` (``decoder.key`` and ``decoder.g_key``) and through the kit's ``Page`` methods the page calls
(``PAGE.whole`` shows ``<namespace>.err_range``). A key whose text has a placeholder in either
language is numeric here (the few text-only placeholders are audited too). Charts are the names
given to ``PAGE.chart`` (an f-string part as ``*``), tables the names given to ``PAGE.table``, metrics
the labels given to ``.metric``.

:data:`AUDIT` maps each of them to the test that reads it: ``path::function`` or
``path::function[row]``. The test must exist, the row must be a string in that file (a row of its
table), and a test named without a row must name the key or chart in its own source.
"""

from __future__ import annotations

import ast
import re
import string
from functools import cache
from pathlib import Path

import pytest

from attention_ui.i18n import catalog

ROOT = Path(__file__).resolve().parent.parent
PAGES = {"decoder": "app_pages/decoder.py", "cost": "app_pages/cost.py", "inference": "app_pages/inference.py",
         "block": "app_pages/block.py"}  # fmt: skip
SHARED = ("attention_ui.kit", "attention_ui.i18n", "attention_ui.figures", "attention_ui.practice",
          "attention_ui.playground", "attention_ui.page_url", "attention_ui.tables")  # fmt: skip
NUMBERS = "tests/test_app_decoder_numbers.py"


# --- what a page shows, from its code ----------------------------------------------------------------


def _module_path(name: str) -> Path | None:
    for p in (ROOT / (name.replace(".", "/") + ".py"), ROOT / name.replace(".", "/") / "__init__.py"):
        if p.exists():
            return p
    return None


def _shared(name: str) -> bool:
    return name == "attention_ui" or any(name == s or name.startswith(s + ".") for s in SHARED)


@cache
def page_modules(page: str) -> tuple[Path, ...]:
    """The page file and the page's own ``attention_ui`` modules it imports, transitively."""
    todo, seen = [ROOT / page], []
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.append(path)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("attention_ui"):
                names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names if a.name.startswith("attention_ui")]
            else:
                continue
            todo += [p for n in names if not _shared(n) and (p := _module_path(n)) and p not in seen]
    return tuple(seen)


@cache
def kit_method_keys() -> dict[str, tuple[str, ...]]:
    """``Page`` method -> the ``<namespace>.<suffix>`` suffixes it shows (``whole`` -> ``err_range``)."""
    tree = ast.parse((ROOT / "attention_ui/kit.py").read_text(encoding="utf-8"))
    page = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Page")
    out = {}
    for fn in (n for n in page.body if isinstance(n, ast.FunctionDef)):
        suffixes = []
        for node in ast.walk(fn):
            if isinstance(node, ast.JoinedStr) and len(node.values) == 2:
                head, tail = node.values
                if (
                    isinstance(head, ast.FormattedValue)
                    and ast.unparse(head.value) == "self.namespace"
                    and isinstance(tail, ast.Constant)
                    and re.fullmatch(r"\.[a-z_0-9]+", tail.value)
                ):
                    suffixes.append(tail.value[1:])
        out[fn.name] = tuple(suffixes)
    return out


def _namespace(page: str) -> str:
    """The catalog namespace of the page's kit: the second argument of ``kit.Page(...)`` or
    ``kit.Page.of(TABLE, ...)``, else (``kit.Page.of(TABLE)``) the prefix of the table it binds."""
    for path in page_modules(page):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and ast.unparse(node.func) in (
                "kit.Page",
                "Page",
                "kit.Page.of",
                "Page.of",
            ):
                if len(node.args) > 1:
                    return node.args[1].value
                tables = [
                    n.args[0].value
                    for n in ast.walk(tree)
                    if isinstance(n, ast.Call) and ast.unparse(n.func) == "Table" and n.args
                ]
                if tables:
                    return tables[0]
    raise AssertionError(f"no kit.Page in {page}")


def fields(text: str) -> set[str]:
    """The placeholders of a message, without LaTeX arguments: ``\\sqrt{d_k}`` in a message shown as
    it is (no values given) is a LaTeX argument, not a field."""
    return {
        name
        for literal, name, _, _ in string.Formatter().parse(text)
        if name and not re.search(r"\\[A-Za-z]+$", literal)
    }


def _pattern(node: ast.JoinedStr) -> str:
    return "".join(re.escape(v.value) if isinstance(v, ast.Constant) else "[a-z0-9_]+" for v in node.values)


def _name(node: ast.AST) -> str | None:
    """A chart or table name: a string, or an f-string with ``*`` for its formatted parts."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "*" for v in node.values)
    return None


@cache
def _chart_forwarders(page: str) -> dict[str, tuple[int, str]]:
    """Functions of a page's modules that pass one of their parameters on as a chart's name
    (``page.chart(fig, name, alt)``): function -> (that parameter's position, its name)."""
    out = {}
    for path in page_modules(page):
        for fn in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(fn, ast.FunctionDef):
                continue
            params = [a.arg for a in fn.args.args]
            for node in ast.walk(fn):
                if (
                    isinstance(node, ast.Call)
                    and ast.unparse(node.func) in ("PAGE.chart", "page.chart")
                    and len(node.args) > 1
                    and isinstance(node.args[1], ast.Name)
                    and node.args[1].id in params
                ):
                    out[fn.name] = (params.index(node.args[1].id), node.args[1].id)
    return out


def _argument(call: ast.Call, position: int, keyword: str) -> ast.AST | None:
    if len(call.args) > position:
        return call.args[position]
    return next((k.value for k in call.keywords if k.arg == keyword), None)


def shown(page: str) -> dict[str, set[str]]:
    """``{"messages": numeric keys, "charts": ..., "tables": ..., "metrics": label keys, "formulas":
    functions that write a computed number into a formula}`` of a page."""
    en, ja, ns = catalog("en"), catalog("ja"), _namespace(page)
    keys: set[str] = set()
    charts: set[str] = set()
    tables: set[str] = set()
    metrics: set[str] = set()
    formulas: set[str] = set()
    forwarders = _chart_forwarders(page)
    for path in page_modules(page):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for fn in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)):
            for node in ast.walk(fn):  # a formula with a computed number in it: latex:<function>
                if (
                    isinstance(node, ast.Call)
                    and ast.unparse(node.func).endswith(".latex")
                    and any(
                        isinstance(v, ast.FormattedValue)
                        and (v.format_spec is not None or isinstance(v.value, ast.Attribute))
                        for arg in node.args
                        for v in ast.walk(arg)
                    )
                ):
                    formulas.add(fn.name)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in en:
                keys.add(node.value)
            elif isinstance(node, ast.JoinedStr):
                pat = _pattern(node)
                if re.match(
                    r"[a-z_]+\\\.[a-z_]", pat
                ):  # a namespace and the start of a name, not f"ns.{key}"
                    keys |= {k for k in en if re.fullmatch(pat, k)}
            elif isinstance(node, ast.Call):
                func = ast.unparse(node.func)
                method = func.rsplit(".", 1)[-1]
                if method == "model_text" and len(node.args) > 2 and isinstance(node.args[2], ast.Constant):
                    keys |= {f"{ns}.{node.args[2].value}", f"{ns}.g_{node.args[2].value}"} & set(en)
                elif func.startswith("PAGE.") and method in kit_method_keys():
                    keys |= {f"{ns}.{s}" for s in kit_method_keys()[method]} & set(en)
                if (
                    func in ("PAGE.chart", "page.chart")
                    and len(node.args) > 1
                    and (name := _name(node.args[1]))
                ):
                    charts.add(name)
                if method in forwarders and (name := _name(_argument(node, *forwarders[method]))):
                    charts.add(name)  # a helper that draws the chart it is given the name of
                if (
                    func in ("PAGE.table", "page.table")
                    and len(node.args) > 1
                    and (name := _name(node.args[1]))
                ):
                    tables.add(name)
                if method == "metric" and node.args and isinstance(node.args[0], ast.Call):
                    label = node.args[0]
                    if label.args and isinstance(label.args[0], ast.Constant):
                        metrics.add(label.args[0].value)
    numeric = {k for k in keys if fields(en[k]) or fields(ja.get(k, ""))}
    return {"messages": numeric, "charts": charts, "tables": tables, "metrics": metrics, "formulas": formulas}


# --- the audit: what a page shows -> the test that reads it ------------------------------------------


def _decoder_audit() -> dict[str, str]:
    from tests.test_app_decoder_numbers import CHARTS, MESSAGES

    audit = {f"decoder.{key}": f"{NUMBERS}::test_message[{key}]" for key in MESSAGES}
    audit |= {
        "decoder.warn_truncated": f"{NUMBERS}::test_long_text_and_ignored_link_numbers",
        "decoder.info_removed": f"{NUMBERS}::test_long_text_and_ignored_link_numbers",
        "decoder.info_full": f"{NUMBERS}::test_long_text_and_ignored_link_numbers",
        "decoder.info_url_ignored": f"{NUMBERS}::test_long_text_and_ignored_link_numbers",
        "decoder.about_top_k": f"{NUMBERS}::test_long_text_and_ignored_link_numbers",
        "decoder.cache_now": f"{NUMBERS}::test_generated_token_numbers",
        "decoder.g_cache_now": f"{NUMBERS}::test_generated_token_numbers",
        "decoder.alt_cache": f"{NUMBERS}::test_generated_token_numbers",
        "decoder.explain_rows": f"{NUMBERS}::test_generated_token_numbers",
        "decoder.alt_rows": f"{NUMBERS}::test_generated_token_numbers",
        "decoder.g_band_broken": f"{NUMBERS}::test_broken_band_and_bound_show_as_errors",
        "decoder.g_score_bound_broken": f"{NUMBERS}::test_broken_band_and_bound_show_as_errors",
        "decoder.err_range": f"{NUMBERS}::test_seed_out_of_range_names_the_range",
        **{
            f"decoder.{k}": f"{NUMBERS}::test_token_word_numbers"
            for k in (
                "tok_part_short",
                "tok_part",
                "tok_completes_short",
                "tok_completes",
                "tok_stray",
                "tok_special",
            )
        },  # fmt: skip
        "decoder.g_rope_long": "tests/test_app_decoder_gemma.py::test_long_preset_shows_the_band_and_the_triangle",
        **{
            f"decoder.{k}": "tests/test_app_decoder_gemma.py::test_special_tokens_are_explained_and_can_be_left_out"
            for k in ("about_special", "no_special_on")
        },
        "decoder.g_long_on": "tests/test_app_decoder_gemma.py::test_long_preset_shows_the_band_and_the_triangle",
        "decoder.gemma_licence": "tests/test_app_decoder_gemma.py::test_japanese_defaults_to_gemma_with_whole_word_labels",
    }
    charts = {
        re.sub(
            r"_(\d+)$", "_*", re.sub(r"^g_map_(local|global)$", "g_map_*", name)
        ): f"{NUMBERS}::test_chart[{name}]"
        for name in CHARTS
    }
    charts |= {
        "cache": f"{NUMBERS}::test_generated_token_numbers",
        "rows": f"{NUMBERS}::test_generated_token_numbers",
    }
    audit |= {f"chart:{k}": v for k, v in charts.items()}
    audit["table:compare"] = f"{NUMBERS}::test_compare_table"
    audit["latex:section_rope"] = f"{NUMBERS}::test_formulas"
    return audit


PAGE_NUMBERS = "tests/test_app_page_numbers.py"
MESSAGES_FILE = "tests/test_app_page_messages.py"
_INF = f"{MESSAGES_FILE}::test_inference_messages"
_BLK = f"{MESSAGES_FILE}::test_block_messages"
INFERENCE_AUDIT = {
    **{f"inference.{k}": _INF for k in (
        "explain_cache", "explain_flops", "flops_note", "alt_flops", "group_line", "explain_groups", "head_title",
        "alt_groups", "causal_note", "alt_causal", "source", "source_context", "size_note", "alt_size")},
    **{f"inference.{k}": f"{MESSAGES_FILE}::test_inference_over_the_context_and_with_a_window"
       for k in ("over_context", "source_window", "window_note")},
    "inference.err_config": f"{MESSAGES_FILE}::test_inference_settings_error_names_the_problem",
    "inference.cache_equal": f"{PAGE_NUMBERS}::test_inference_page_numbers",
    "inference.cache_differs": f"{PAGE_NUMBERS}::test_inference_page_reports_a_broken_cache_as_an_error",
    "inference.size_metric": f"{PAGE_NUMBERS}::test_inference_page_numbers",
    "inference.mha_metric": f"{PAGE_NUMBERS}::test_inference_page_numbers",
    "metric:inference.cache_gap": f"{PAGE_NUMBERS}::test_inference_page_numbers",
    "metric:inference.change_causal": f"{PAGE_NUMBERS}::test_inference_page_numbers",
    "metric:inference.change_bidirectional": f"{PAGE_NUMBERS}::test_inference_page_numbers",
    "table:steps": f"{PAGE_NUMBERS}::test_inference_page_numbers",
    "table:causal": f"{PAGE_NUMBERS}::test_inference_page_numbers",
    "table:flops": f"{MESSAGES_FILE}::test_inference_charts_and_flops_table",
    **{f"chart:{c}": f"{MESSAGES_FILE}::test_inference_charts_and_flops_table" for c in ("flops", "groups", "causal", "size")},
}  # fmt: skip
BLOCK_AUDIT = {
    **{f"block.{k}": _BLK for k in (
        "formula_note", "alt_stages", "shapes_note", "residual_pre", "alt_depth", "depth_lesson", "crossover_label",
        "alt_flops", "crossover")},
    "block.residual_post": f"{MESSAGES_FILE}::test_block_post_ln_and_a_long_sentence",
    "block.warn_truncated": f"{MESSAGES_FILE}::test_block_post_ln_and_a_long_sentence",
    "block.err_range": f"{MESSAGES_FILE}::test_block_flops_input_out_of_range_names_the_range",
    "block.residual_broken": f"{PAGE_NUMBERS}::test_block_page_reports_a_broken_residual_as_an_error",
    "block.err_heads": "tests/test_app_block.py::test_flops_crossover_and_errors",
    "table:stages": f"{PAGE_NUMBERS}::test_block_page_numbers",
    "table:norms": f"{PAGE_NUMBERS}::test_block_page_numbers",
    "table:depth": f"{PAGE_NUMBERS}::test_block_page_numbers",
    "table:flops": f"{PAGE_NUMBERS}::test_block_page_numbers",
    "table:where": _BLK,
    **{f"chart:{c}": _BLK for c in ("stages", "depth", "flops")},
}  # fmt: skip
_MEM = f"{MESSAGES_FILE}::test_cost_memory_and_flops_numbers"
_CHK = f"{MESSAGES_FILE}::test_cost_tiled_window_linear_and_ring_numbers"
COST_AUDIT = {
    **{f"cost.{k}": _MEM for k in ("dtype_name", "alt_memory", "alt_flops", "flops_ratio", "explain_measure")},
    **{f"table:{k}": _MEM for k in ("notes", "extended", "memory", "flops")},
    **{f"chart:{k}": _MEM for k in ("memory", "flops")},
    **{f"cost.{k}": _CHK for k in (
        "check_ok", "alt_tiles", "win_ok", "win_model", "alt_window_tiles", "explain_window_time", "lin_ok",
        "alt_softmax_weights", "alt_linear_weights", "alt_linear_row", "alt_linear_flops", "explain_exact")},
    **{f"ring.{k}": _CHK for k in (
        "ok", "alt_schedule", "row_title", "alt_row", "row_note", "load_causal", "alt_load", "alt_orders",
        "cost_intro", "hides", "send_note", "alt_times", "memory_note")},
    **{f"metric:{k}": _CHK for k in (
        "cost.check_diff", "cost.check_tile_share", "ring.metric_steps", "ring.metric_busiest",
        "ring.metric_send_step", "ring.metric_send_total", "ring.metric_compute", "ring.metric_transfer")},
    **{f"chart:{k}": _CHK for k in ("tiles", "window_tiles", "linear_row", "linear_flops", "ring_load")},
    "table:tiles": _CHK,
    "table:ring_memory": _CHK,
    "cost.check_bad": f"{MESSAGES_FILE}::test_cost_broken_tiled_check_is_an_error",
    # read back from the page and compared with the core or hand formulas (tests/test_app_page_numbers.py)
    "cost.win_counts": f"{PAGE_NUMBERS}::test_cost_page_window_and_linear_numbers",
    "cost.lin_sharpness": f"{PAGE_NUMBERS}::test_cost_page_window_and_linear_numbers",
    "cost.lin_crossover": f"{PAGE_NUMBERS}::test_cost_page_window_and_linear_numbers",
    "metric:cost.win_diff": f"{PAGE_NUMBERS}::test_cost_page_window_and_linear_numbers",
    "metric:cost.win_model_diff": f"{PAGE_NUMBERS}::test_cost_page_window_and_linear_numbers",
    "metric:cost.check_tiles": f"{PAGE_NUMBERS}::test_cost_page_window_and_linear_numbers",
    "metric:cost.win_scores": f"{PAGE_NUMBERS}::test_cost_page_window_and_linear_numbers",
    "metric:cost.lin_diff": f"{PAGE_NUMBERS}::test_cost_page_window_and_linear_numbers",
    "metric:cost.lin_state": f"{PAGE_NUMBERS}::test_cost_page_window_and_linear_numbers",
    "metric:cost.lin_weight_diff": f"{PAGE_NUMBERS}::test_cost_page_window_and_linear_numbers",
    "table:exact": f"{PAGE_NUMBERS}::test_cost_page_window_and_linear_numbers",
    "cost.units_note": "tests/test_catalog_claims.py::test_the_notes_table_reading",
    "ring.bad": "tests/test_app_ring_ssm.py::test_a_broken_merge_turns_the_ring_check_red",
    "metric:ring.metric_diff": "tests/test_app_ring_ssm.py::test_ring_section_in_english_matches_the_loops",
    "metric:ring.metric_blocks": "tests/test_app_ring_ssm.py::test_ring_section_in_english_matches_the_loops",
}  # fmt: skip
_MEASURED = f"{MESSAGES_FILE}::test_cost_measured_sweeps_show_what_was_measured"
_RING = f"{MESSAGES_FILE}::test_cost_ring_charts_and_other_settings"
COST_AUDIT |= {
    **{f"cost.{k}": _MEASURED for k in (
        "measure_done", "measure_lesson", "measure_meta", "alt_peak", "alt_time", "win_time_lesson", "win_time_meta",
        "alt_window_time")},
    **{f"chart:{k}": _MEASURED for k in ("peak", "time", "window_time")},
    **{f"table:{k}": _MEASURED for k in ("measure", "window_time")},
    **{f"ring.{k}": _RING for k in ("load_full", "exposed", "orders_note")},
    **{f"chart:{k}": _RING for k in ("ring_schedule", "ring_row", "ring_orders", "ring_times")},
    "table:ring_row": _RING,
    "cost.win_same": "tests/test_app_cost.py::test_sliding_window_section",
    "cost.measure_progress": "tests/test_app_cost.py::test_live_measurement_progress_counts_the_sizes",
}  # fmt: skip
# What no test reads yet, listed so that the audit says so (any NEW numeric message or chart still fails
# until it has a test). Shrink this list; never add to it. ring.err_n cannot be reached from the page's
# widgets (the cost n starts at 16, P ends at 16): a guard for a state the page cannot get into.
NOT_YET_AUDITED: dict[str, frozenset[str]] = {"cost": frozenset({"ring.err_n"})}


@cache
def audit(page: str) -> dict[str, str]:
    """What ``page`` shows -> the test that reads it."""
    return {"decoder": _decoder_audit, "inference": lambda: INFERENCE_AUDIT, "block": lambda: BLOCK_AUDIT,
            "cost": lambda: COST_AUDIT}[page]()  # fmt: skip


def _entries(page: str) -> set[str]:
    s = shown(page)
    return (
        s["messages"]
        | {f"chart:{c}" for c in s["charts"]}
        | {f"table:{t}" for t in s["tables"]}
        | {f"metric:{m}" for m in s["metrics"]}
        | {f"latex:{f}" for f in s["formulas"]}
    )


@pytest.mark.parametrize("page", list(PAGES))
def test_every_number_the_page_shows_has_a_test(page: str) -> None:
    missing = sorted(_entries(PAGES[page]) - set(audit(page)) - NOT_YET_AUDITED.get(page, frozenset()))
    assert not missing, f"numbers on the {page} page with no test in its audit table: {missing}"


@pytest.mark.parametrize("page", list(NOT_YET_AUDITED))
def test_the_list_of_gaps_only_shrinks(page: str) -> None:
    """A gap that got its audit entry, or that the page no longer shows, leaves the list."""
    gaps = NOT_YET_AUDITED[page]
    assert not gaps & set(audit(page)), sorted(gaps & set(audit(page)))
    assert gaps <= _entries(PAGES[page]), sorted(gaps - _entries(PAGES[page]))


@pytest.mark.parametrize("page", list(PAGES))
def test_the_audit_names_only_what_the_page_shows(page: str) -> None:
    stale = sorted(set(audit(page)) - _entries(PAGES[page]))
    assert not stale, f"audit entries for keys or charts the {page} page does not show: {stale}"


@cache
def _tests_of(path: str) -> tuple[dict[str, str], set[str]]:
    """A test file's test functions (name -> source) and its string constants."""
    src = (ROOT / path).read_text(encoding="utf-8")
    tree = ast.parse(src)
    functions = {n.name: ast.get_source_segment(src, n) for n in tree.body if isinstance(n, ast.FunctionDef)}
    strings = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    return functions, strings


@pytest.mark.parametrize("page", list(PAGES))
def test_every_audit_entry_names_a_test_that_exists_and_reads_it(page: str) -> None:
    wrong = []
    for what, entry in sorted(audit(page).items()):
        m = re.fullmatch(r"(?P<path>tests/[\w/]+\.py)::(?P<fn>test_\w+)(?:\[(?P<row>[\w*-]+)\])?", entry)
        if not m or not (ROOT / m["path"]).exists():
            wrong.append((what, entry, "no such file"))
            continue
        functions, strings = _tests_of(m["path"])
        if m["fn"] not in functions:
            wrong.append((what, entry, "no such test"))
        elif m["row"] is not None and m["row"] not in strings:
            wrong.append((what, entry, "no such row"))
        elif m["row"] is None:
            # the key's name, the chart's or table's name; for a formula, that the test reads the LaTeX
            short = "latex" if what.startswith("latex:") else what.split(":", 1)[-1].split(".", 1)[-1]
            short = short.split("*")[0].rstrip("_")
            if short not in functions[m["fn"]]:
                wrong.append((what, entry, f"the test does not name {short!r}"))
    assert not wrong, wrong


def test_the_derivation_finds_what_it_should() -> None:
    """The parser itself, on things known to be on the decoder page: a key named outright, one formed
    by an f-string, one through model_text (the Gemma twin), one through a kit method, a chart named
    by an f-string, the table; and a key the page does not use is not found."""
    s = shown(PAGES["decoder"])
    assert {
        "decoder.gqa_memory",
        "decoder.layer_option_local",
        "decoder.g_rope_norms",
        "decoder.err_range",
    } <= s["messages"]
    assert "decoder.title" not in s["messages"]  # no placeholder
    assert {"weights_*", "g_map_*", "grid"} <= s["charts"] and s["tables"] == {"compare"}
    assert "inference.cache_gap" in shown(PAGES["inference"])["metrics"]
