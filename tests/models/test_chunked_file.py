"""Joining a model file's chunks once (attention_core/models/chunked_file.py), on small files made here."""

from __future__ import annotations

import hashlib
import multiprocessing
import os
from pathlib import Path

import pytest

from attention_core.models import chunked_file as C


def make_chunks(tmp_path: Path, sizes=(1000, 2500, 7)) -> tuple[list[Path], bytes]:
    data = bytes((i * 7 + 3) % 251 for i in range(sum(sizes)))
    chunks, at = [], 0
    for k, size in enumerate(sizes):
        p = tmp_path / f"model.gguf.part{k:02d}"
        p.write_bytes(data[at : at + size])
        chunks.append(p)
        at += size
    return chunks, data


def test_assembles_verifies_and_stamps(tmp_path):
    chunks, data = make_chunks(tmp_path)
    target = tmp_path / "cache" / "model.gguf"
    sha = hashlib.sha256(data).hexdigest()
    assert C.assemble_once(chunks, target, sha, len(data)) == target
    assert target.read_bytes() == data
    assert C.is_verified(target, sha, len(data))
    assert [p.name for p in target.parent.iterdir() if p.suffix in (".partial", ".tmp")] == []


def test_second_start_does_not_hash_again(tmp_path, monkeypatch):
    chunks, data = make_chunks(tmp_path)
    target, sha = tmp_path / "m.gguf", hashlib.sha256(data).hexdigest()
    C.assemble_once(chunks, target, sha, len(data))

    def no_hashing(path):
        raise AssertionError("hashed again")

    monkeypatch.setattr(C, "sha256_of", no_hashing)
    assert C.assemble_once(chunks, target, sha, len(data)) == target


def test_a_changed_file_is_rebuilt(tmp_path):
    chunks, data = make_chunks(tmp_path)
    target, sha = tmp_path / "m.gguf", hashlib.sha256(data).hexdigest()
    C.assemble_once(chunks, target, sha, len(data))
    target.write_bytes(b"x" * len(data))  # same size, other bytes, newer time
    assert not C.is_verified(target, sha, len(data))
    C.assemble_once(chunks, target, sha, len(data))
    assert target.read_bytes() == data


def test_wrong_checksum_leaves_no_file(tmp_path):
    chunks, data = make_chunks(tmp_path)
    target = tmp_path / "m.gguf"
    with pytest.raises(ValueError, match="sha256"):
        C.assemble_once(chunks, target, "0" * 64, len(data))
    assert not target.exists()
    assert [p.name for p in tmp_path.iterdir() if ".partial" in p.name] == []


def test_missing_chunk(tmp_path):
    chunks, data = make_chunks(tmp_path)
    chunks[1].unlink()
    with pytest.raises(FileNotFoundError, match="part01"):
        C.assemble_once(chunks, tmp_path / "m.gguf", hashlib.sha256(data).hexdigest(), len(data))


def _assemble_in_child(args) -> str:
    chunks, target, sha, size = args
    return str(C.assemble_once([Path(c) for c in chunks], Path(target), sha, size))


def test_processes_starting_together_get_one_good_file(tmp_path):
    chunks, data = make_chunks(tmp_path, sizes=(300_000, 300_000, 1))
    target, sha = tmp_path / "cache" / "m.gguf", hashlib.sha256(data).hexdigest()
    args = ([str(c) for c in chunks], str(target), sha, len(data))
    with multiprocessing.get_context("fork").Pool(4) as pool:
        results = pool.map(_assemble_in_child, [args] * 4)
    assert results == [str(target)] * 4
    assert target.read_bytes() == data
    leftovers = [p.name for p in target.parent.iterdir() if p.name.endswith((".partial", ".tmp"))]
    assert leftovers == []


def test_cache_dir_from_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv(C.CACHE_ENV, str(tmp_path / "here"))
    assert C.cache_dir() == tmp_path / "here"
    monkeypatch.delenv(C.CACHE_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert C.cache_dir() == tmp_path / "xdg" / "attention-lab"
    assert os.fspath(C.cache_dir()).endswith("attention-lab")
