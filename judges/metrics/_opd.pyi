"""Type stub of the compiled OPD sums (``judges/metrics/_opd.c``)."""

from typing import Any

def sums(
    values: Any, epsilon: float
) -> tuple[float, float, float, float, float, float, float, int] | None:
    """StreamingOPD's running sums over ``values`` (None unless a list of floats in [0, 1])."""
