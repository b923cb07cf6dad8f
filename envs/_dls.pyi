"""Type stub of the compiled IK step (``envs/_dls.c``)."""

from collections.abc import Sequence

import numpy as np

def step(
    jacobian: np.ndarray,
    q: np.ndarray,
    position: Sequence[float],
    orientation: Sequence[float],
    target: Sequence[float],
    target_orientation: Sequence[float],
    damping: float,
    bounds: np.ndarray,
    gain: float,
    out: np.ndarray,
) -> None:
    """One damped-least-squares IK step of the arm, written into ``out`` (7 float64)."""
