"""Low-level state observations with a documented, named layout.

Why a builder: the flat vector's layout is fixed per scene at construction, so
each step makes one batched backend read (:meth:`Backend.read_bodies`) and one
gather into the layout, which keeps the env step cheap relative to physics.
"""

from __future__ import annotations

from functools import partial

import gymnasium as gym
import numpy as np

from .backends import Backend, body_reading_offsets, read_bodies_via_getters
from .scene_builder import BuiltScene

__all__ = ["ObservationBuilder"]

_ALL = np.logical_and.reduce
"""``ndarray.all`` without its Python-level wrapper."""


def _after(start: int, count: int) -> list[int]:
    """Reading positions ``start``, ``start + 1``, ... (``count`` of them)."""
    return list(range(start, start + count))


class ObservationBuilder:
    """Fills observations for one built scene.

    Args:
        backend: The physics backend.
        scene: The built scene.
    """

    def __init__(self, backend: Backend, scene: BuiltScene) -> None:
        self.backend = backend
        self.scene = scene
        # the scene's shared batched read, and where each observation entry sits in it
        queries, starts = scene.state_queries(), scene.state_query_starts()
        robot = {key: starts[0] + value for key, value in body_reading_offsets(queries[0]).items()}
        # the suction point is the robot's one link; suction is a placeholder, set per observation
        index = _after(robot["link_positions"], 3) + _after(robot["link_orientations"], 4)
        index += _after(robot["joints"], 7) + [0]
        self._suction = 14
        self._eef = robot["link_positions"]
        sizes: list[tuple[str, int]] = [("eef_pos", 3), ("eef_quat", 4), ("arm_qpos", 7), ("suction", 1)]
        self._joint_slices: list[tuple[str, list[str], slice]] = []
        for obj, query, start in zip(scene.objects.values(), queries[1:], starts[1:], strict=True):
            at = {key: start + value for key, value in body_reading_offsets(query).items()}
            n, links = len(query.joints), query.links
            index += _after(at["base"], 7) + _after(at["aabb"], 6) + _after(at["joints"], n)
            index += _after(at["link_positions"], 3 * len(links))
            if n:
                sl = slice(at["joints"], at["joints"] + n)
                self._joint_slices.append((obj.name, list(obj.joint_index), sl))
            sizes += [(f"{obj.name}/pos", 3), (f"{obj.name}/quat", 4)]
            sizes += [(f"{obj.name}/aabb_min", 3), (f"{obj.name}/aabb_max", 3)]
            sizes += [(f"{obj.name}/joints", n), (f"{obj.name}/links", 3 * len(links))]
        self.layout: dict[str, slice] = {}
        position = 0
        for name, size in sizes:
            self.layout[name] = slice(position, position + size)
            position += size
        self.size = position
        self._queries = queries
        self._index = np.array(index, dtype=np.intp)
        reader = getattr(backend, "read_bodies", None)
        self._read = reader if reader is not None else partial(read_bodies_via_getters, backend)
        self._finite = True
        self._rounded: dict[str, tuple[list[float], dict[str, float]]] = {}
        self._reading: np.ndarray | None = None
        """The backend reading behind the last observation."""

    def space(self, obs_mode: str) -> gym.Space:
        """The observation space for ``obs_mode``."""
        if obs_mode == "state":
            return gym.spaces.Box(-np.inf, np.inf, shape=(self.size,), dtype=np.float32)
        return gym.spaces.Dict(
            {
                name: gym.spaces.Box(-np.inf, np.inf, shape=(sl.stop - sl.start,), dtype=np.float32)
                for name, sl in self.layout.items()
            }
        )

    def observe(self, obs_mode: str):
        """Current observation (a fresh array or dict of arrays)."""
        # one batched backend read (it also primes the backend's memo for the
        # robot's IK and the goal), one gather into layout order, one cast
        reading = self._reading = self._read(self._queries)
        values = reading[self._index]
        values[self._suction] = 1.0 if self.scene.robot.suction_on else 0.0
        obs = values.astype(np.float32)
        self._finite = bool(_ALL(np.isfinite(obs)))
        if obs_mode == "state":
            return obs
        return {name: obs[sl].copy() for name, sl in self.layout.items()}

    def eef_position(self) -> list[float]:
        """The suction point position now, from the scene's shared read (memoised per state)."""
        at = self._eef
        return self._read(self._queries)[at : at + 3].tolist()

    def last_is_finite(self) -> bool:
        """Whether every entry of the last :meth:`observe` is finite (no physics blow-up)."""
        return self._finite

    def zeros(self, obs_mode: str):
        """An all-zero observation (used after a physics error)."""
        if obs_mode == "state":
            return np.zeros(self.size, dtype=np.float32)
        return {name: np.zeros(sl.stop - sl.start, dtype=np.float32) for name, sl in self.layout.items()}

    def last_joint_values(self) -> dict[str, dict[str, float]]:
        """Joint values read by the last :meth:`observe` (object -> joint -> value, 5 decimals)."""
        reading = self._reading
        if reading is None:
            return {}
        result = {}
        for obj, names, sl in self._joint_slices:
            raw = reading[sl].tolist()
            last = self._rounded.get(obj)
            if last is None or last[0] != raw:  # joints mostly sit still: round only on change
                rounded = {name: round(v, 5) for name, v in zip(names, raw, strict=True)}
                last = self._rounded[obj] = (raw, rounded)
            result[obj] = last[1].copy()
        return result
