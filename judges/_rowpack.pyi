"""Type stub of the compiled row packer (``judges/_rowpack.c``)."""

from typing import Any

def pack(obj: Any) -> bytes | None:
    """``obj`` as bytes if made only of None, bools, ints, floats, str, bytes, tuples, lists, dicts."""

def unpack(data: bytes) -> Any:
    """The object :func:`pack` made ``data`` from (equal, same types); ValueError otherwise."""

class RowLog:
    """An episode's rows packed back to back in one buffer, with each row's Φ (see the C file)."""

    def __init__(self, capacity: int = 0) -> None: ...
    def add_row(
        self, fast: Any, info: Any, states: bool, action: Any, form: Any, reward: Any,
        terminated: Any, truncated: Any,
    ) -> bool:
        """Add the recorder's common row packed in one call (False: nothing added)."""
    def add(self, row: Any, phi: Any) -> None:
        """Add ``row``, packed when plain, else kept as the object; ``phi`` is its Φ."""
    def keep(self, row: Any, phi: Any) -> None:
        """Add ``row`` kept as the object."""
    def rows(self) -> list[Any]:
        """Every row, in order."""
    def phis(self) -> list[Any]:
        """Each row's Φ, in order."""
    def phi_doubles(self) -> bytes | None:
        """Each row's Φ as native doubles (None when some Φ is not a float)."""
    def packed(self, index: int) -> bytes | None:
        """Row ``index``'s bytes (None: kept as the object)."""
    def __len__(self) -> int: ...
    @property
    def nbytes(self) -> int:
        """Bytes of the packed rows."""
