"""Type stub of the compiled row packer (``judges/_rowpack.c``)."""

from typing import Any

def pack(obj: Any) -> bytes | None:
    """``obj`` as bytes if made only of None, bools, ints, floats, str, bytes, tuples, lists, dicts."""

def unpack(data: bytes) -> Any:
    """The object :func:`pack` made ``data`` from (equal, same types); ValueError otherwise."""

def pack_row(
    fast: Any, info: Any, states: bool, action: Any, form: Any, reward: Any, terminated: Any,
    truncated: Any,
) -> bytes | None:
    """The recorder's packed row in one call (None: the caller builds the row itself)."""
