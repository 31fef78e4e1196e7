"""The decoder page's settings, declared once (attention_ui/settings_table.py): key prefix ``decoder``;
its binding to the page kit, and its frozen settings (shared by ``app_pages/decoder.py`` and the views
in this package). The page keeps its view in its own URL (attention_ui/decoder/url.py): the table's
``url`` names are the parameters that code reads and writes."""

from __future__ import annotations

from dataclasses import dataclass

from attention_core.labs.decoder import HEAD_STATS
from attention_core.models import smollm2
from attention_ui import kit
from attention_ui.decoder.models import MAX_HEADS, MAX_LAYERS, MODELS
from attention_ui.settings_table import Setting, Table

N_CANDIDATES = 12  # bars in the next-token chart
TEMPERATURE_RANGE = (0.0, 2.0)
TOP_K_RANGE = (0, 100)

TABLE = Table(
    "decoder",
    # no first value: the language picks it (DEFAULT_MODEL) unless a URL did; Gemma's terms are shown
    # beside the choice (app_pages/decoder.py controls)
    Setting("model", choices=MODELS, url="model"),
    # the learner's sentence, from any page or a shared link; the catalog's only while there is none
    Setting("text", text="decoder.default_text", shared=kit.LEARNER_TEXT, url="text"),
    # the larger model's ranges; the page clamps them to the chosen model's layers and heads
    Setting("layer", 0, bounds=(0, MAX_LAYERS - 1), translated=True, url="layer"),
    Setting("head", 0, bounds=(0, MAX_HEADS - 1), translated=True, url="head"),
    Setting("stat", "first", choices=HEAD_STATS, translated=True, url="stat"),
    Setting("temperature", 1.0, bounds=TEMPERATURE_RANGE, url="temp"),
    Setting("top_k", 0, bounds=TOP_K_RANGE, url="top_k"),
    Setting("seed", 0, bounds=kit.SEED_RANGE, url="seed"),
    Setting("key", 0, translated=True),  # the RoPE section's key position
    Setting("no_special", False),  # leave the special tokens out of the candidates and of generation
    Setting("generated", why="the token ids appended by 'next token' (generation_view)"),
    Setting("generated_for", why="the prompt the generated ids continue"),
    Setting("next", why="the 'next token' button"),
    Setting("reset", why="the button that drops the generated tokens"),
    Setting("long_on", why="Gemma 3 runs on the long preset text instead of the learner's (gemma_view)"),
    Setting("long", why="the button that runs Gemma 3 on the long preset text"),
    Setting("back", why="the button back to the learner's sentence, above the long run"),
    Setting("back_below", why="the same button, below the local/global section"),
)
PAGE = kit.Page.of(TABLE, url_context=False, link=True)  # its URL is its own (url.py)
GENERATED = TABLE.key("generated")
GENERATED_FOR = TABLE.key("generated_for")
DEFAULT_MODEL = {"ja": "gemma3"}  # by language; any other: "smollm2" (a URL's model= wins)
CONFIG = smollm2.SMOLLM2_135M  # the default model; the page reads models.config(settings.model)
GROUP = CONFIG.n_heads // CONFIG.n_kv_heads


@dataclass(frozen=True)
class DecoderSettings:
    text: str
    layer: int
    head: int
    temperature: float
    top_k: int
    seed: int
    model: str = "smollm2"  # attention_ui.decoder.models.MODELS
    no_special: bool = False  # special tokens left out, the other tokens' probabilities renormalised


def model_text(t, name: str, key: str, **values) -> str:
    """``decoder.g_<key>`` for Gemma 3 when the catalog has one (a number or claim that differs
    from SmolLM2's), else ``decoder.<key>``."""
    from attention_ui.i18n import catalog

    gemma_key = f"decoder.g_{key}"
    if name == "gemma3" and gemma_key in catalog(t.lang):
        return t(gemma_key, **values)
    return t(f"decoder.{key}", **values)
