"""Portable snapshots of a scene's dynamic state.

Why portable: a later subtask, a replayed skill or another process must start
exactly where a previous subtask ended, so a :class:`SimState` holds plain
numbers (JSON-serialisable), not backend handles. Restoring first returns the
backend to the scene's settled initial snapshot (clearing contact caches) and
then teleports every body; the same snapshot therefore always leads to the same
trajectory.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from .scene_builder import BuiltScene, _configure_joints

__all__ = ["SimState", "capture_state", "restore_state"]


@dataclass
class SimState:
    """Dynamic state of a built scene.

    Attributes:
        robot_qpos: All robot joint positions (one per robot joint index).
        robot_qvel: All robot joint velocities.
        bodies: Object name -> ``{"pos", "quat", "lin_vel", "ang_vel", "qpos", "qvel"}``
            (lists of floats; joint lists follow the object's movable-joint order).
        grasped: ``(object, link)`` held by suction, or None.
        suction_on: Whether suction is on.
        elapsed_steps: Env steps taken in the episode.
        world_seed: The seed of the randomized world it was taken in
            (:class:`~simjudge.envs.randomization.WorldSample`); restoring it into an env
            with the same randomization re-enters that world first (the goal's initial
            values, the camera). None: a fixed world.
    """

    robot_qpos: list[float]
    robot_qvel: list[float]
    bodies: dict[str, dict[str, list[float]]] = field(default_factory=dict)
    grasped: tuple[str, str] | None = None
    suction_on: bool = False
    elapsed_steps: int = 0
    world_seed: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SimState:
        """Inverse of :meth:`to_dict`."""
        data = dict(data)
        if data.get("grasped") is not None:
            data["grasped"] = tuple(data["grasped"])
        return cls(**data)


def _robot_joints(scene: BuiltScene) -> list[int]:
    return [j.index for j in scene.robot.backend.joint_infos(scene.robot.body)]


def capture_state(scene: BuiltScene, elapsed_steps: int) -> SimState:
    """Snapshot ``scene`` now."""
    backend = scene.robot.backend
    q, qd = backend.get_joint_states(scene.robot.body, _robot_joints(scene))
    bodies = {}
    for obj in scene.objects.values():
        pos, quat = backend.get_base_pose(obj.body)
        lin, ang = backend.get_base_velocity(obj.body)
        jq, jqd = backend.get_joint_states(obj.body, list(obj.joint_index.values()))
        bodies[obj.name] = {
            "pos": pos.tolist(),
            "quat": quat.tolist(),
            "lin_vel": lin.tolist(),
            "ang_vel": ang.tolist(),
            "qpos": jq.tolist(),
            "qvel": jqd.tolist(),
        }
    held = None
    att = scene.robot.attachment
    if att is not None:
        for obj in scene.objects.values():
            if obj.body == att.body:
                held = (obj.name, next(n for n, i in obj.link_index.items() if i == att.link))
    return SimState(q.tolist(), qd.tolist(), bodies, held, scene.robot.suction_on, elapsed_steps)


def restore_state(scene: BuiltScene, state: SimState | None) -> None:
    """Return to the initial snapshot, then (if given) teleport to ``state``."""
    robot = scene.robot
    backend = robot.backend
    robot.release()
    backend.restore_state(scene.initial_state)
    if scene.after_restore is not None:
        scene.after_restore()
    for obj in scene.objects.values():
        _configure_joints(backend, obj)
    if state is None:
        robot.hold()
        return
    missing = set(scene.objects) - set(state.bodies)
    if missing:
        raise ValueError(
            f"state does not match the scene: no entry for objects {sorted(missing)}; "
            "a SimState can only be restored into the scene config it was taken from"
        )
    joints = _robot_joints(scene)
    backend.reset_joint_states(robot.body, joints, np.asarray(state.robot_qpos), np.asarray(state.robot_qvel))
    for obj in scene.objects.values():
        body = state.bodies[obj.name]
        pos, quat = np.asarray(body["pos"]), np.asarray(body["quat"])
        move = True
        if obj.fixed:
            # a fixed base never moves in an episode: where it already stands (the restored
            # snapshot), teleporting it to its own reading could round its pose (pose ->
            # quaternion -> pose is not exact for a turned base) and shift what follows
            now_pos, now_quat = backend.get_base_pose(obj.body)
            move = not (np.array_equal(now_pos, pos) and np.array_equal(now_quat, quat))
        if move:
            backend.set_base_pose(obj.body, pos, quat)
        indices = list(obj.joint_index.values())
        if indices:
            backend.reset_joint_states(obj.body, indices, np.asarray(body["qpos"]), np.asarray(body["qvel"]))
    robot.hold(np.asarray(state.robot_qpos[:7]))
    if state.grasped is not None:
        obj = scene.objects[state.grasped[0]]
        robot.attach(obj.body, obj.link_index[state.grasped[1]])
    robot.suction_on = state.suction_on
