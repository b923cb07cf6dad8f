"""Type stub of the compiled OPD sums and metrics (``judges/metrics/_opd.c``)."""

from typing import Any

def sums(
    values: Any, epsilon: float
) -> tuple[float, float, float, float, float, float, float, int] | None:
    """StreamingOPD's running sums over ``values`` (None unless a list of floats in [0, 1])."""

def metrics(values: Any, epsilon: float, k: int) -> dict[str, float] | None:
    """``streamed_opd_metrics(values, epsilon, k).as_dict()`` in one call (checked ε and k).

    ``values``: a list of floats or a bytes object of native doubles; None unless non-empty
    with every value in [0, 1].
    """
