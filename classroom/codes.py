"""Join codes, teacher and student tokens: how they are made, stored and compared.

- A join code is short and read off a projector: letters and digits that cannot be confused
  (no 0/O, 1/I/L, 2/Z, 5/S, 8/B, U/V), :data:`CODE_LENGTH` of them from ``secrets``.
- The teacher's token is 32 random bytes (43 URL-safe characters); the store keeps only its
  SHA-256, and a token presented later is compared with :func:`hmac.compare_digest` (constant time).
- A student's token (16 random bytes) names the student's answers; the store keeps its SHA-256 too.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

CODE_ALPHABET = "ACDEFGHJKMNPQRTWXY34679"  # 23 symbols, none that looks like another
CODE_LENGTH = 6  # 23**6 ≈ 1.5e8 codes: guessing a live one by chance needs ~1e8 tries (throttled)
TEACHER_TOKEN_BYTES = 32
STUDENT_TOKEN_BYTES = 16
TOKEN_MAX = 128  # longer strings are not tokens of ours: refused before hashing


def new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def normalise_code(raw: object) -> str | None:
    """A typed or scanned code in canonical form (upper case, spaces and dashes dropped), or None."""
    if not isinstance(raw, str) or len(raw) > 64:
        return None
    code = "".join(ch for ch in raw.upper() if ch not in " -\t")
    if len(code) != CODE_LENGTH or any(ch not in CODE_ALPHABET for ch in code):
        return None
    return code


def new_teacher_token() -> str:
    return secrets.token_urlsafe(TEACHER_TOKEN_BYTES)


def new_student_token() -> str:
    return secrets.token_urlsafe(STUDENT_TOKEN_BYTES)


def new_id() -> str:
    """A random id for a session or a poll (not a secret: it appears in no one's address)."""
    return secrets.token_hex(12)


def token_hash(token: str) -> str:
    """What the store keeps of a token: its SHA-256 in hex."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def key_hash(key: str) -> str:
    """What the store keeps of a client address (or a device): a SHA-256 in hex, salted by the
    caller with the class id where it is kept per class. An IPv4 address can still be found again by
    trying all 2**32, so these rows are deleted with their class or after the throttle's window."""
    return hashlib.sha256(("attnlab-client\n" + key).encode("utf-8", "surrogatepass")).hexdigest()


def well_formed(token: object) -> bool:
    return (
        isinstance(token, str) and 16 <= len(token) <= TOKEN_MAX and token.isascii() and token.isprintable()
    )


def token_matches(token: object, stored_hash: str) -> bool:
    """Whether ``token`` hashes to ``stored_hash``, compared in constant time."""
    if not well_formed(token):
        return False
    return hmac.compare_digest(token_hash(token), stored_hash)
