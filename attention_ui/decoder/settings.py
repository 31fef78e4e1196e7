"""The decoder page's binding to the page kit, its defaults and its frozen settings (shared by
``app_pages/decoder.py`` and :mod:`.generation_view`)."""

from __future__ import annotations

from dataclasses import dataclass

from attention_core.models import smollm2
from attention_ui import kit

N_CANDIDATES = 12  # bars in the next-token chart
GENERATED = "dc_generated"  # ids appended by "next token"
GENERATED_FOR = "dc_generated_for"  # the prompt they continue
DEFAULTS = {
    "dc_layer": 0,
    "dc_head": 0,
    "dc_seed": 0,
    "dc_stat": "first",
    "dc_temperature": 1.0,
    "dc_top_k": 0,
    "dc_key": 0,
}
PAGE = kit.Page(
    "dc",
    "decoder",
    DEFAULTS,
    choice_keys=("dc_layer", "dc_head", "dc_stat", "dc_key"),
    translated_defaults={"dc_text": "decoder.default_text"},  # only while the learner has no sentence
    shared=kit.learner_context(text="dc_text"),  # the learner's sentence, from any page or a shared link
    url_context=False,  # its URL holds its own view (attention_ui.decoder.url)
    link=True,  # so it gets the copy-link button
)
CONFIG = smollm2.SMOLLM2_135M
GROUP = CONFIG.n_heads // CONFIG.n_kv_heads


@dataclass(frozen=True)
class DecoderSettings:
    text: str
    layer: int
    head: int
    temperature: float
    top_k: int
    seed: int
