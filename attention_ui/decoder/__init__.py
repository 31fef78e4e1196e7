"""The decoder page's helpers: cached model calls (:mod:`.cached`) and its URL state (:mod:`.url`)."""


def sequence_text(model, ids) -> tuple[str, bool]:
    """The text of a token sequence and whether its last character is still unfinished.

    The tokens' bytes are joined and read as UTF-8; a character whose bytes are not all generated
    yet (a byte-level model writes 猫 as up to three tokens) is left out instead of showing as �.
    Special tokens (``<|im_end|>`` …) are written by name. ``-> (text, unfinished)``.
    """
    data = b"".join(model.token_bytes[i] or model.vocab[i].encode("utf-8") for i in ids)
    text = data.decode("utf-8", errors="ignore")
    unfinished = len(text.encode("utf-8")) < len(data) and data.decode("utf-8", errors="replace").endswith(
        "\ufffd"
    )
    return text, unfinished
