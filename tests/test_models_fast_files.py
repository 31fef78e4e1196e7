"""Fast checks of the model-file helpers (chunked_file) and the SentencePiece rebuild (spm_bpe)
that the mutation run found unpinned (issue 28). Small files made here; tokenisations worked out by
hand from the rules in spm_bpe's docstring."""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from pathlib import Path

import pytest

from attention_core.models import chunked_file as C
from attention_core.models import spm_bpe as S


def chunks_of(tmp_path: Path, sizes=(700, 1300, 5)) -> tuple[list[Path], bytes, str]:
    data = bytes((i * 11 + 5) % 253 for i in range(sum(sizes)))
    chunks, at = [], 0
    for k, size in enumerate(sizes):
        p = tmp_path / f"m.gguf.part{k:02d}"
        p.write_bytes(data[at : at + size])
        chunks.append(p)
        at += size
    return chunks, data, hashlib.sha256(data).hexdigest()


# ------------------------------------------------------------------------------------ chunked_file


def test_cache_dir_default_is_the_home_cache(monkeypatch, tmp_path):
    monkeypatch.delenv(C.CACHE_ENV, raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert C.cache_dir() == tmp_path / "home" / ".cache" / "attention-lab"
    monkeypatch.setenv("XDG_CACHE_HOME", "")  # empty counts as unset
    assert C.cache_dir() == tmp_path / "home" / ".cache" / "attention-lab"


def test_a_nested_cache_folder_and_its_stamp(tmp_path):
    chunks, data, sha = chunks_of(tmp_path)
    target = tmp_path / "a" / "b" / "m.gguf"  # two folders that do not exist yet
    assert C.assemble_once(chunks, target, sha, len(data)) == target
    stamp = tmp_path / "a" / "b" / "m.gguf.verified"
    st = target.stat()
    assert stamp.read_text("ascii") == f"{sha} {len(data)} {st.st_mtime_ns}\n"
    assert (tmp_path / "a" / "b" / "m.gguf.lock").exists()  # the lock file sits beside the target
    assert C.is_verified(target, sha, len(data))
    assert not C.is_verified(target, sha, len(data) + 1)  # another expected size
    assert not C.is_verified(target, "0" * 64, len(data))  # another expected digest
    assert C.sha256_of(target) == sha


def test_a_verified_file_is_used_without_its_chunks(tmp_path):
    chunks, data, sha = chunks_of(tmp_path)
    target = tmp_path / "cache" / "m.gguf"
    C.assemble_once(chunks, target, sha, len(data))
    for c in chunks:
        c.unlink()  # e.g. the wheels removed after the first start
    assert C.assemble_once(chunks, target, sha, len(data)) == target
    assert target.read_bytes() == data


def test_missing_chunks_are_named_before_anything_is_written(tmp_path):
    chunks, data, sha = chunks_of(tmp_path)
    chunks[0].unlink()
    chunks[2].unlink()
    target = tmp_path / "cache" / "m.gguf"
    with pytest.raises(FileNotFoundError, match=r"missing model chunks: .*part00.*, .*part02"):
        C.assemble_once(chunks, target, sha, len(data))
    assert not target.parent.exists()


def test_the_temporary_files_are_made_beside_the_target(tmp_path, monkeypatch):
    """Not in the system's temporary folder (another file system would break the atomic rename):
    the assembly works with that folder gone."""
    chunks, data, sha = chunks_of(tmp_path)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "no-such-folder"))
    target = tmp_path / "cache" / "m.gguf"
    assert C.assemble_once(chunks, target, sha, len(data)) == target
    assert C.is_verified(target, sha, len(data))


def test_a_lost_stamp_is_rewritten_after_one_hash_without_copying(tmp_path, monkeypatch):
    chunks, data, sha = chunks_of(tmp_path)
    target = tmp_path / "m.gguf"
    C.assemble_once(chunks, target, sha, len(data))
    (tmp_path / "m.gguf.verified").unlink()
    assert not C.is_verified(target, sha, len(data))
    hashed = []
    real = C.sha256_of
    monkeypatch.setattr(C, "sha256_of", lambda p: hashed.append(p) or real(p))

    real_mkstemp = tempfile.mkstemp

    def no_copy(*a, **k):
        if k.get("suffix") == ".partial":  # the file the chunks are copied into
            raise AssertionError("copied the chunks again")
        return real_mkstemp(*a, **k)

    monkeypatch.setattr(tempfile, "mkstemp", no_copy)
    assert C.assemble_once(chunks, target, sha, len(data)) == target
    assert hashed == [target]
    monkeypatch.undo()
    assert C.is_verified(target, sha, len(data))  # stamped again, with the right digest


def test_a_process_that_waited_uses_the_file_another_just_verified(tmp_path, monkeypatch):
    """The check under the lock: another process finished while this one waited for the lock."""
    chunks, data, sha = chunks_of(tmp_path)
    target = tmp_path / "m.gguf"
    real_lock = C._exclusive_lock

    @contextlib.contextmanager
    def other_process_first(path):
        monkeypatch.setattr(C, "_exclusive_lock", real_lock)
        C.assemble_once(chunks, target, sha, len(data))  # "the other process"

        def no_hashing(p):
            raise AssertionError("hashed again")

        monkeypatch.setattr(C, "sha256_of", no_hashing)
        with real_lock(path):
            yield

    monkeypatch.setattr(C, "_exclusive_lock", other_process_first)
    assert C.assemble_once(chunks, target, sha, len(data)) == target
    assert target.read_bytes() == data


@pytest.mark.parametrize("remove_first", [False, True])
def test_a_failed_rename_keeps_its_error_and_leaves_no_temporary_file(tmp_path, monkeypatch, remove_first):
    """``remove_first``: the temporary file is already gone when the clean-up runs (its own
    FileNotFoundError must not hide the rename's error)."""
    chunks, data, sha = chunks_of(tmp_path)
    target = tmp_path / "m.gguf"
    real_replace = os.replace

    def failing_replace(src, dst):
        if remove_first:
            os.unlink(src)
        raise OSError("rename refused")

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OSError, match="rename refused"):
        C.assemble_once(chunks, target, sha, len(data))
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([c.name for c in chunks] + ["m.gguf.lock"])
    # the same for the stamp's own atomic write
    monkeypatch.setattr(os, "replace", real_replace)
    C.assemble_once(chunks, target, sha, len(data))
    (tmp_path / "m.gguf.verified").unlink()
    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OSError, match="rename refused"):
        C._write_atomically(tmp_path / "m.gguf.verified", "x\n")
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


# ------------------------------------------------------------------------------------ spm_bpe

N, CTRL, UNK, USER, BYTE = S.NORMAL, S.CONTROL, S.UNKNOWN, S.USER_DEFINED, S.BYTE


def test_byte_value_needs_all_three_marks():
    assert S.byte_value("<0xAB>") == 0xAB
    assert S.byte_value("<0xABC>") is None  # seven characters
    assert S.byte_value("xx12yz") is None  # six characters, no <0x … >
    assert S.byte_value("<0xAB]") is None and S.byte_value("[0xAB>") is None


def test_merge_rules_by_hand():
    """Which pairs merge: only a neighbouring pair of normal tokens whose concatenation is a normal
    token; the better-scored token first; a split has two non-empty parts."""

    def read(tokens, scores, types, text):
        return [tokens[i] for i in S.build_tokenizer(tokens, scores, types).encode(text)]

    # "abc" (score -1) is reached through ab (-2) + c, although a + bc is no pair (bc is no token)
    tokens = ["a", "b", "c", "ab", "abc", "<ab>", "x"]
    scores = [0.0, 0.0, 0.0, -2.0, -1.0, 5.0, 0.0]
    types = [N, N, N, N, N, CTRL, N]
    assert read(tokens, scores, types, "abc") == ["abc"]
    # with "ab" a control token, a + b never merges, so abc cannot be reached
    assert read(tokens, scores, [N, N, N, CTRL, N, CTRL, N], "abc") == ["a", "b", "c"]
    # a control token made of normal ones is never a merge target
    assert read(["a", "b", "ab"], [0.0, 0.0, 9.0], [N, N, CTRL], "ab") == ["a", "b"]
    # an empty piece in the vocabulary changes nothing
    assert read(["", "a", "b", "ab"], [0.0] * 4, [N] * 4, "ab") == ["ab"]
    with pytest.raises(ValueError):
        S.build_tokenizer(["a", "b"], [0.0, 0.0], [N])  # the lists must line up


def test_user_defined_tokens_match_the_raw_text_only():
    """Typed ▁▁ (U+2581 twice) is not two spaces: the raw text has no "  ", so BPE reads it (▁+▁ is
    a normal token), while two typed spaces are the user-defined token."""
    tokens = [
        "<bos>",
        "<unk>",
        *[f"<0x{b:02X}>" for b in range(256)],
        "  ",
        "a",
        "b",
        "\u2581",
        "\u2581\u2581",
    ]
    types = [CTRL, UNK, *[BYTE] * 256, USER, N, N, N, N]
    scores = [0.0] * (len(tokens) - 4) + [-1.0, -2.0, -3.0, -0.5]
    tk = S.build_tokenizer(tokens, scores, types)
    ids = S.encode_ids(tk, "a\u2581\u2581b", bos_id=0)
    assert [tokens[i] for i in ids] == ["<bos>", "a", "\u2581\u2581", "b"]
    assert [tokens[i] for i in S.encode_ids(tk, "a  b", bos_id=0)] == ["<bos>", "a", "  ", "b"]


def test_a_character_without_any_token_is_the_unknown_token():
    """With no <0xNN> byte tokens to fall back on, z has no token at all: SentencePiece reads it as
    <unk> (id 1 here), one per character."""
    tokens, types = ["<bos>", "<unk>", "a", "b"], [CTRL, UNK, N, N]
    tk = S.build_tokenizer(tokens, [0.0, 0.0, -1.0, -2.0], types)
    assert S.encode_ids(tk, "az", bos_id=0) == [0, 2, 1]
    # the unknown token's string can be named
    other = S.build_tokenizer(["<bos>", "<?>", "a"], [0.0, 0.0, -1.0], [CTRL, UNK, N], unk="<?>")
    assert S.encode_ids(other, "za", bos_id=0) == [0, 1, 2]
