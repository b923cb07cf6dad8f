"""Which part: positions in the world frame and the spatial words that pick a part by them.

The built scene places an object at yaw 0 with its front facing -x and the robot at
(-0.6, 0, 0) facing +x, so as the robot sees it: **left = +y, right = -y, front / near =
-x, back / far = +x, top / upper = +z, bottom / lower = -z**. A part's position is the
centre of its link's axis-aligned bounding box with every joint at 0, read with pybullet
(DIRECT) from the asset's URDF.

:func:`pick` applies a clause's spatial words in turn: an extreme word (``left``, ``top``,
``front``) keeps the parts at that extreme (within :data:`SAME` of it); an ordinal counted
from a side (``the second from the right``) keeps the n-th group from it; ``middle`` keeps
the median one along the axis the parts spread on. A word that separates nothing (``left``
for parts stacked one above the other), an ordinal past the number of parts, or words that
leave more than one part refuse — the reader never guesses.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ["AXIS_WORDS", "ORDINAL_NUMBERS", "SAME", "Spatial", "pick", "world_centres"]

SAME = 0.03
"""Parts whose coordinates differ by less than this (m) are side by side on that axis."""

AXIS_WORDS: dict[str, tuple[int, int]] = {
    "left": (1, 1), "leftmost": (1, 1), "right": (1, -1), "rightmost": (1, -1),
    "top": (2, 1), "upper": (2, 1), "uppermost": (2, 1), "topmost": (2, 1), "highest": (2, 1),
    "bottom": (2, -1), "lower": (2, -1), "lowest": (2, -1), "bottommost": (2, -1),
    "front": (0, -1), "frontmost": (0, -1), "near": (0, -1), "nearest": (0, -1),
    "back": (0, 1), "rear": (0, 1), "far": (0, 1), "farthest": (0, 1), "backmost": (0, 1),
}
"""Spatial word -> (axis index x/y/z, +1 for the largest coordinate, -1 for the smallest)."""

ORDINAL_NUMBERS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6}
"""Ordinal words counted from a named side."""


@dataclass(frozen=True)
class Spatial:
    """One spatial request: ``word`` (an axis word or ``middle``), with ``nth`` from it."""

    word: str
    nth: int = 1


@contextlib.contextmanager
def _stdout_to_stderr() -> Iterator[None]:
    """Send what C code prints on fd 1 (pybullet's banner) to stderr: stdout stays JSON."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        os.dup2(2, 1)
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


@functools.lru_cache(maxsize=256)
def world_centres(urdf: str) -> dict[str, tuple[float, float, float]]:
    """Each link's AABB centre with every joint at 0 (object at yaw 0, base at the origin)."""
    with _stdout_to_stderr():
        import pybullet as p

        client = p.connect(p.DIRECT)
    try:
        body = p.loadURDF(urdf, useFixedBase=True, physicsClientId=client)
        out: dict[str, tuple[float, float, float]] = {}
        for index in range(p.getNumJoints(body, physicsClientId=client)):
            name = p.getJointInfo(body, index, physicsClientId=client)[12].decode()
            low, high = p.getAABB(body, index, physicsClientId=client)
            out[name] = tuple(round((a + b) / 2, 4) for a, b in zip(low, high, strict=True))
        return out
    finally:
        p.disconnect(client)


def _groups(items: list[tuple[float, object]]) -> list[list[object]]:
    """Items sorted by coordinate, merged into groups of coordinates within :data:`SAME`."""
    ordered = sorted(items, key=lambda kv: kv[0])
    groups: list[list[object]] = []
    last = None
    for value, item in ordered:
        if last is None or value - last >= SAME:
            groups.append([item])
        else:
            groups[-1].append(item)
        last = value
    return groups


def _middle(parts: list[Any], where: dict[Any, Any]) -> tuple[list[Any], str | None]:
    spreads = [max(where[p][k] for p in parts) - min(where[p][k] for p in parts)
               for k in range(3)]
    axis = max(range(3), key=lambda k: spreads[k])
    groups = _groups([(where[p][axis], p) for p in parts])
    if len(groups) % 2 == 0 or spreads[axis] < SAME:
        return [], f"'middle' does not resolve: {len(groups)} positions along the parts' row"
    return groups[len(groups) // 2], None


def pick(parts: list[Any], where: dict[Any, Any], requests: list[Spatial]) -> tuple[list[Any], list[str]]:
    """The parts the spatial requests keep, and how (or why they do not resolve).

    Args:
        parts: Candidate parts (hashable).
        where: Part -> (x, y, z) world centre.
        requests: The clause's spatial words, in order.

    Returns:
        ``(kept, notes)``; ``kept`` is empty when a request does not resolve, and the last
        note says why.
    """
    notes: list[str] = []
    for request in requests:
        if request.word == "middle":
            kept, why = _middle(parts, where)
            if why:
                return [], [*notes, why]
            parts = kept
            notes.append("'middle' by position")
            continue
        axis, sign = AXIS_WORDS[request.word]
        groups = _groups([(sign * -where[p][axis], p) for p in parts])  # the named side first
        if len(groups) < 2:
            return [], [*notes, f"'{request.word}' does not resolve: the parts are side by side "
                                f"on that axis (within {SAME * 100:.0f} cm)"]
        if request.nth > len(groups):
            return [], [*notes, f"'{request.word}' asks for number {request.nth} of only "
                                f"{len(groups)}"]
        parts = groups[request.nth - 1]
        count = "" if request.nth == 1 else f"number {request.nth} from the "
        notes.append(f"{count}'{request.word}' ({'xyz'[axis]} "
                     f"{'+' if sign > 0 else '-'}) keeps {len(parts)}")
    return parts, notes
