"""The JSON the server and the worker exchange. Arrays travel as base64 of little-endian float64
(or of bytes, for booleans) with their shape.

The server reads the worker's reply as untrusted data (a worker whose sandbox was escaped could
write anything): never pickle, a bounded size, and :func:`decode_array` checks shape, size and
length before it makes an array.
"""

from __future__ import annotations

import base64
import math

import numpy as np

MAX_ELEMENTS = 100_000  # per array on the wire (a learner's [n, d_v] output is far smaller)
MAX_DIMS = 3


class WireError(ValueError):
    """A message that does not have the shape the protocol promises."""


def encode_array(a) -> dict:
    a = np.asarray(a)
    if a.dtype == bool:
        return {
            "shape": list(a.shape),
            "bool": base64.b64encode(a.astype(np.uint8).tobytes()).decode("ascii"),
        }
    data = np.ascontiguousarray(a, dtype="<f8")
    return {"shape": list(a.shape), "f8": base64.b64encode(data.tobytes()).decode("ascii")}


def decode_array(obj) -> np.ndarray:
    """The array of :func:`encode_array`, or WireError (read-only, a copy owned by the caller)."""
    if not isinstance(obj, dict):
        raise WireError("an array must be an object")
    shape = obj.get("shape")
    if (
        not isinstance(shape, list)
        or len(shape) > MAX_DIMS
        or not all(type(s) is int and 0 <= s <= MAX_ELEMENTS for s in shape)
    ):
        raise WireError("bad shape")
    count = math.prod(shape)
    if count > MAX_ELEMENTS:
        raise WireError("array too large")
    kind = "f8" if "f8" in obj else "bool"
    text = obj.get(kind)
    if not isinstance(text, str):
        raise WireError("no data")
    try:
        raw = base64.b64decode(text.encode("ascii"), validate=True)
    except (ValueError, UnicodeEncodeError) as err:
        raise WireError("bad base64") from err
    width = 8 if kind == "f8" else 1
    if len(raw) != count * width:
        raise WireError("data length does not match the shape")
    if kind == "f8":
        a = np.frombuffer(raw, dtype="<f8").astype(np.float64).reshape(shape)
    else:
        a = (np.frombuffer(raw, dtype=np.uint8) != 0).reshape(shape)
    a.setflags(write=False)
    return a


def maybe_array(obj) -> np.ndarray | None:
    return None if obj is None else decode_array(obj)
