"""Low-level state observations with a documented, named layout.

Why a builder: the flat vector's layout is fixed per scene at construction, so
each step only fills preallocated slices with a handful of batched backend
queries (one per object and kind), which keeps the env step cheap relative to
physics.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np

from .backends import Backend
from .scene_builder import BuiltScene

__all__ = ["ObservationBuilder"]

_OBJECT_KEYS = ("pos", "quat", "aabb_min", "aabb_max", "joints", "links")


class ObservationBuilder:
    """Fills observations for one built scene.

    :param backend: The physics backend.
    :param scene: The built scene.
    """

    def __init__(self, backend: Backend, scene: BuiltScene) -> None:
        self.backend = backend
        self.scene = scene
        sizes: list[tuple[str, int]] = [("eef_pos", 3), ("eef_quat", 4), ("arm_qpos", 7), ("suction", 1)]
        objects = []
        for obj in scene.objects.values():
            joints = list(obj.joint_index.values())
            links = [i for i in obj.link_index.values() if i >= 0]
            objects.append((obj, list(obj.joint_index), joints, links))
            sizes += [(f"{obj.name}/pos", 3), (f"{obj.name}/quat", 4)]
            sizes += [(f"{obj.name}/aabb_min", 3), (f"{obj.name}/aabb_max", 3)]
            sizes += [(f"{obj.name}/joints", len(joints)), (f"{obj.name}/links", 3 * len(links))]
        self.layout: dict[str, slice] = {}
        start = 0
        for name, size in sizes:
            self.layout[name] = slice(start, start + size)
            start += size
        self.size = start
        # per object: handles and the slices to fill, resolved once
        self._objects = [
            (obj, names, joints, links, *(self.layout[f"{obj.name}/{k}"] for k in _OBJECT_KEYS))
            for obj, names, joints, links in objects
        ]
        self._buffer = np.zeros(self.size, dtype=np.float32)
        self._joint_values: dict[str, tuple[list[str], np.ndarray]] = {}

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
        b, lay, buf = self.backend, self.layout, self._buffer
        robot = self.scene.robot
        pos, orn = robot.ee_pose()
        buf[lay["eef_pos"]] = pos
        buf[lay["eef_quat"]] = orn
        buf[lay["arm_qpos"]] = robot.arm_qpos()
        buf[lay["suction"]] = 1.0 if robot.suction_on else 0.0
        for obj, names, joints, links, s_pos, s_quat, s_lo, s_hi, s_joints, s_links in self._objects:
            buf[s_pos], buf[s_quat] = b.get_base_pose(obj.body)
            buf[s_lo], buf[s_hi] = b.get_aabb(obj.body)
            if joints:
                values = b.get_joint_states(obj.body, joints)[0]
                buf[s_joints] = values
                self._joint_values[obj.name] = (names, values)
            if links:
                buf[s_links] = b.get_link_poses(obj.body, links)[0].ravel()
        if obs_mode == "state":
            return buf.copy()
        return {name: buf[sl].copy() for name, sl in lay.items()}

    def zeros(self, obs_mode: str):
        """An all-zero observation (used after a physics error)."""
        if obs_mode == "state":
            return np.zeros(self.size, dtype=np.float32)
        return {name: np.zeros(sl.stop - sl.start, dtype=np.float32) for name, sl in self.layout.items()}

    def last_joint_values(self) -> dict[str, dict[str, float]]:
        """Joint values read by the last :meth:`observe` (object -> joint -> value)."""
        return {
            obj: {name: round(float(v), 5) for name, v in zip(names, values, strict=True)}
            for obj, (names, values) in self._joint_values.items()
        }
