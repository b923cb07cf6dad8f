"""A small picklable state API for the hostile corpus (module-level, so workers import it)."""

from __future__ import annotations

import numpy as np

__all__ = ["API", "Snapshot"]


class Snapshot:
    """A picklable state view."""

    joint = 0.5


def get_joint_state(view: Snapshot, obj: str, joint: str) -> float:
    """Joint value of the snapshot."""
    return view.joint


def get_joint_limit(view: Snapshot, obj: str, joint: str) -> tuple[float, float]:
    """Fixed limits."""
    return 0.0, 1.0


def get_eef_pos(view: Snapshot) -> tuple[np.ndarray, np.ndarray]:
    """A fixed pose."""
    return np.array([0.4, 0.0, 0.5]), np.array([0.0, 0.0, 0.0, 1.0])


def get_position(view: Snapshot, name: str) -> np.ndarray:
    """A fixed position."""
    return np.zeros(3)


def in_bbox(view: Snapshot, pos: object, lo: object, hi: object) -> bool:
    """Whether ``pos`` lies in the box."""
    p = np.asarray(pos, dtype=float)
    return bool(np.all(p >= np.asarray(lo)) and np.all(p <= np.asarray(hi)))


API = {f.__name__: f for f in (get_joint_state, get_joint_limit, get_eef_pos, get_position, in_bbox)}


def crash_interpreter(view: Snapshot) -> float:
    """Kill the calling process with SIGSEGV, as a crash in C code would."""
    import os
    import signal

    os.kill(os.getpid(), signal.SIGSEGV)
    return 0.0
