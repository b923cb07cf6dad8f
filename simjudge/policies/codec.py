"""msgpack with NumPy arrays, as openpi's and RoboArena's WebSocket policy protocol frames it.

Wire format (the protocol's, so any openpi/RoboArena peer reads it):

* an ``ndarray`` is a map with **binary** keys ``__ndarray__`` (true), ``data`` (the
  C-order bytes), ``dtype`` (the ``dtype.str``, e.g. ``"<f4"``, ``"|u1"``) and ``shape``
  (an array of ints);
* a NumPy scalar is a map ``__npgeneric__`` (true), ``data`` (the Python value), ``dtype``;
* everything else is plain msgpack (str as str, bytes as bin); object, void and complex
  dtypes are refused (no pickle, ever), and so are msgpack extension types and an array
  map whose ``shape`` does not match its ``data``;
* a frame decodes to at most :data:`MAX_ITEMS` list and map elements in all (at most
  :data:`MAX_CONTAINER` in one list or map): a small frame cannot become a huge Python
  object (one byte of msgpack per element, 8 or more bytes per decoded reference).

Example:
    >>> import numpy as np
    >>> frame = pack({"actions": np.arange(6, dtype=np.float32).reshape(3, 2), "n": np.int64(3)})
    >>> out = unpack(frame)
    >>> out["actions"].dtype, out["actions"].shape, int(out["n"])
    (dtype('float32'), (3, 2), 3)
"""

from __future__ import annotations

from typing import Any

import msgpack
import numpy as np

__all__ = ["MAX_CONTAINER", "MAX_ITEMS", "pack", "unpack"]

MAX_ITEMS = 1 << 20
"""Most list and map elements one frame may decode to (arrays travel as binary, uncounted)."""
MAX_CONTAINER = 1 << 16
"""Most elements of one list or map."""

_ARRAY, _SCALAR = b"__ndarray__", b"__npgeneric__"
_DATA, _DTYPE, _SHAPE = b"data", b"dtype", b"shape"
_REFUSED_KINDS = frozenset("VOc")


def _refuse(dtype: np.dtype) -> None:
    if dtype.kind in _REFUSED_KINDS:
        raise TypeError(
            f"cannot send dtype {dtype} over the policy protocol (object, void and complex "
            "arrays are refused); convert to a numeric or string dtype"
        )


def _encode(obj: Any) -> Any:
    """The msgpack ``default`` hook: NumPy arrays and scalars to their protocol maps."""
    if isinstance(obj, np.ndarray):
        _refuse(obj.dtype)
        return {_ARRAY: True, _DATA: obj.tobytes(), _DTYPE: obj.dtype.str, _SHAPE: list(obj.shape)}
    if isinstance(obj, np.generic):
        _refuse(obj.dtype)
        return {_SCALAR: True, _DATA: obj.item(), _DTYPE: obj.dtype.str}
    raise TypeError(f"cannot send a {type(obj).__name__} over the policy protocol; send arrays, "
                    "numbers, strings, lists and dicts")


def _decode(obj: dict[Any, Any]) -> Any:
    """The msgpack ``object_hook``: protocol maps back to NumPy arrays and scalars."""
    if _ARRAY in obj:
        dtype = np.dtype(obj[_DTYPE])
        _refuse(dtype)
        data, shape = obj[_DATA], obj[_SHAPE]
        if not isinstance(data, bytes) or not isinstance(shape, list | tuple) or not all(
                isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in shape):
            raise TypeError("an array map needs binary data and a shape of non-negative ints")
        return np.frombuffer(data, dtype=dtype).reshape(shape).copy()
    if _SCALAR in obj:
        dtype = np.dtype(obj[_DTYPE])
        _refuse(dtype)
        return dtype.type(obj[_DATA])
    return obj


def pack(obj: Any) -> bytes:
    """Encode one protocol frame."""
    return msgpack.packb(obj, default=_encode, use_bin_type=True)


def _refuse_ext(code: int, data: bytes) -> Any:
    raise TypeError(f"msgpack extension type {code} is not part of the policy protocol")


class _Budget:
    """Counts the elements of the lists and maps of one frame as they are decoded."""

    def __init__(self, limit: int) -> None:
        self.left = limit

    def spend(self, n: int) -> None:
        self.left -= n
        if self.left < 0:
            raise ValueError(f"frame decodes to more than {MAX_ITEMS} list/map elements; send "
                             "numbers in arrays (binary), not as long msgpack lists")

    def list_hook(self, items: list[Any]) -> list[Any]:
        self.spend(len(items))
        return items

    def object_hook(self, obj: dict[Any, Any]) -> Any:
        self.spend(len(obj))
        return _decode(obj)


def unpack(frame: bytes) -> Any:
    """Decode one protocol frame (strings as ``str``, binary as ``bytes``).

    Raises:
        TypeError: An extension type, a refused dtype or a malformed array map.
        ValueError: Bytes that are not msgpack (msgpack's own errors), or a frame over the
            element budget (:data:`MAX_ITEMS`, :data:`MAX_CONTAINER`).
    """
    budget = _Budget(MAX_ITEMS)
    return msgpack.unpackb(frame, object_hook=budget.object_hook, list_hook=budget.list_hook,
                           raw=False, strict_map_key=False, ext_hook=_refuse_ext,
                           max_array_len=MAX_CONTAINER, max_map_len=MAX_CONTAINER)
