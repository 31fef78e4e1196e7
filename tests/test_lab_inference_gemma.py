"""The inference lab's Gemma 3 270M preset (issue 25): its numbers are the GGUF file's, and the
calculator sizes its cache with 15 windowed layers."""

from __future__ import annotations

import pytest

from attention_core.labs import inference
from attention_core.models import gemma3


def test_preset_is_in_the_list_and_sizes_the_windowed_cache_by_hand() -> None:
    shape = next(p for p in inference.PRESETS if p.key == "gemma3_270m")
    assert (shape.layers, shape.heads, shape.kv_heads, shape.head_dim) == (18, 4, 1, 256)
    assert (shape.context, shape.window, shape.layers_windowed) == (32_768, 512, 15)
    calc = inference.cache_calculation(shape, 8192, 1, 4, shape.window)
    assert calc.size.bytes == 2 * (15 * 512 + 3 * 8192) * 1 * 256 * 4 == 66_060_288
    no_window = inference.cache_calculation(shape, 8192, 1, 4, 0)
    assert no_window.size.bytes == 2 * 18 * 8192 * 256 * 4
    capped = inference.cache_calculation(shape, 10**6, 1, 4, 0)
    assert capped.n == 32_768  # n stops at the context length


@pytest.mark.skipif(not gemma3.is_available(), reason="Gemma 3 270M not installed")
def test_preset_numbers_are_the_files_metadata() -> None:
    from attention_core.models import gguf_file

    meta = gguf_file.read_metadata(gguf_file.open_reader(gemma3.model_path()))
    shape = inference.gemma3_270m_shape()
    assert shape.layers == meta["gemma3.block_count"] and shape.heads == meta["gemma3.attention.head_count"]
    assert shape.kv_heads == meta["gemma3.attention.head_count_kv"]
    assert shape.head_dim == meta["gemma3.attention.key_length"]
    assert (
        shape.context == meta["gemma3.context_length"]
        and shape.window == meta["gemma3.attention.sliding_window"]
    )
    # layer l is global when (l + 1) % 6 == 0 (not in the file): 3 of 18
    assert shape.layers_windowed == shape.layers - shape.layers // 6


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_inference_page_offers_the_gemma_preset(lang: str) -> None:
    from attention_ui.i18n import translate
    from tests.apptest_pages import no_exception, open_page, texts

    at = open_page("app_pages/inference.py", lang=lang)
    index = next(i for i, p in enumerate(inference.PRESETS) if p.key == "gemma3_270m")
    at.selectbox(key="inference_preset").set_value(index).run()
    no_exception(at)
    assert at.session_state["inference_calc_window"] == 512 and at.session_state["inference_calc_kv"] == 1
    text = texts(at) + "\n".join(c.value for c in at.caption)
    assert translate(lang, "inference.source_gemma3_270m") in text
    assert translate(lang, "inference.source_window", w="512", layers=15, total=18) in text
