"""RoboGen's motion primitives, executed physically in a :class:`~simjudge.envs.SimEnv`.

Why physically: a primitive's outcome must be what the simulation does, not
what the plan promised. Each primitive plans with :class:`MotionPlanner` (which
never changes the world), then commands the arm along the interpolated joint
path one control step (``env.frameskip`` physics steps) per waypoint, so the
world, including anything held by suction, really moves; ``env.elapsed_steps``
counts those control steps. Grasps follow RoboGen: pre-contact pose 3 cm out
along the surface normal, straight-line move in until contact, suction on, and a
check that suction holds the intended link; a failed grasp sample is retried
with the next one. The execution loop lives in :mod:`~simjudge.skills.execution`.

Names and arguments match RoboGen so generated code such as
``rgbs, final_state = grasp_object_link(self, "Cabinet", "link_1")`` runs once the
executor binds ``self`` to the env: a :class:`PrimitiveResult` unpacks to
``(frames, final_state)``. Unknown object or link names raise
:class:`~simjudge.envs.state_api.UnknownNameError` listing the valid names; every
other failure is a result with ``success=False`` and a reason.
"""

from __future__ import annotations

import math

import numpy as np

from simjudge.envs.scene_builder import SceneObject
from simjudge.envs.sim_env import SimEnv
from simjudge.envs.state_api import UnknownNameError

from .execution import PrimitiveConfig, PrimitiveResult, PrimitiveRun
from .grasping import GraspCandidate, grasp_candidates, link_surface_samples

__all__ = [
    "PrimitiveConfig",
    "PrimitiveResult",
    "approach_object",
    "approach_object_link",
    "grasp_object",
    "grasp_object_link",
    "move_to_pose",
    "release_grasp",
]


# name resolution -----------------------------------------------------------------------------
def _object(env: SimEnv, name: str) -> SceneObject:
    objects = env.scene.objects
    if not isinstance(name, str) or name not in objects:
        raise UnknownNameError("object", name, list(objects))
    return objects[name]


def _links(env: SimEnv, obj: SceneObject, link_name: str | None) -> list[str]:
    if link_name is None:
        scale = env.scene.config.object(obj.name).scale
        return [n for n in obj.link_index if link_surface_samples(obj.entry, n, scale)]
    if not isinstance(link_name, str) or link_name not in obj.link_index:
        raise UnknownNameError("link", link_name, list(obj.link_index), obj.name)
    return [link_name]


def _candidates(run: PrimitiveRun, obj: SceneObject, links: list[str]) -> list[GraspCandidate]:
    c = run.config
    return grasp_candidates(
        run.env.scene, obj, links, c.standoff, c.approach, cache_dir=c.cache_dir
    )


# primitives ------------------------------------------------------------------------------------
def _approach(env: SimEnv, object_name: str, link_name: str | None, config) -> PrimitiveResult:
    obj = _object(env, object_name)
    links = _links(env, obj, link_name)
    run = PrimitiveRun(env, config)
    cands = _candidates(run, obj, links)
    if not cands:
        return run.result(
            False, f"no graspable surface found on {object_name}/{link_name or 'any link'}"
        )
    for cand in cands[: run.config.max_grasps]:
        run.attempts += 1
        reason = run.move(
            cand.pre_contact, cand.orientation, ik_tries=run.config.grasp_ik_tries, free_roll=True
        )
        if not reason:
            run.notes.append(f"{cand.kind}: reached")
            return run.result(True)
        run.notes.append(f"{cand.kind}: {reason}")
    return run.result(
        False, f"could not reach a pre-contact pose of {object_name}: {run.notes[-1]}"
    )


def approach_object_link(
    env: SimEnv, object_name: str, link_name: str, *, config: PrimitiveConfig | None = None
) -> PrimitiveResult:
    """Move the gripper to a pre-contact pose facing a surface of one link (no contact)."""
    return _approach(env, object_name, link_name, config)


def approach_object(
    env: SimEnv, object_name: str, *, config: PrimitiveConfig | None = None
) -> PrimitiveResult:
    """Move the gripper to a pre-contact pose facing a surface of the object (no contact)."""
    return _approach(env, object_name, None, config)


def _grasp(env: SimEnv, object_name: str, link_name: str | None, config) -> PrimitiveResult:
    obj = _object(env, object_name)
    links = _links(env, obj, link_name)
    run = PrimitiveRun(env, config)
    accept = {(obj.body, obj.link_index[n]) for n in links}
    att = run.robot.attachment
    if att is not None and (att.body, att.link) in accept:
        return run.result(True)
    if att is not None:
        run.robot.release()
        run.notes.append("released what suction held before grasping")
    cands = _candidates(run, obj, links)
    if not cands:
        return run.result(
            False, f"no graspable surface found on {object_name}/{link_name or 'any link'}"
        )
    for cand in cands[: run.config.max_grasps]:
        run.attempts += 1
        reason = run.move(
            cand.pre_contact, cand.orientation, run.attempts - 1, run.config.grasp_ik_tries, True
        )
        if not reason:
            reason = run.contact(cand, accept)
        run.notes.append(
            f"{cand.kind} at {np.round(cand.point, 3).tolist()}: {reason or 'grasped'}"
        )
        if not reason:
            return run.result(True)
    return run.result(
        False, f"no grasp of {object_name}/{link_name or 'any link'} succeeded: {run.notes[-1]}"
    )


def grasp_object_link(
    env: SimEnv, object_name: str, link_name: str, *, config: PrimitiveConfig | None = None
) -> PrimitiveResult:
    """Grasp one link by suction: plan to a pre-contact pose, move in, suction on.

    Success means suction holds exactly that link. Grasp samples are tried in
    rank order, up to ``config.max_grasps``.
    """
    return _grasp(env, object_name, link_name, config)


def grasp_object(
    env: SimEnv, object_name: str, *, config: PrimitiveConfig | None = None
) -> PrimitiveResult:
    """Grasp an object by suction on any of its links (a rigid object's only link)."""
    return _grasp(env, object_name, None, config)


def release_grasp(env: SimEnv, *, config: PrimitiveConfig | None = None) -> PrimitiveResult:
    """Turn suction off and hold the arm still for a few steps while objects settle."""
    run = PrimitiveRun(env, config)
    held = env.view.grasped()
    run.robot.release()
    hold = run.robot.arm_qpos().copy()
    for _ in range(run.config.release_steps):
        run.step(hold)
    run.notes.append(f"released {held}" if held else "nothing was held")
    return run.result(run.robot.attachment is None)


def _quat_from_euler(rpy: np.ndarray) -> np.ndarray:
    """Quaternion of roll, pitch, yaw (the convention of ``get_orientation``)."""
    r, p, y = (float(v) / 2.0 for v in rpy)
    cr, sr, cp, sp, cy, sy = (
        math.cos(r),
        math.sin(r),
        math.cos(p),
        math.sin(p),
        math.cos(y),
        math.sin(y),
    )
    return np.array(
        [
            sr * cp * cy - cr * sp * sy,
            cr * sp * cy + sr * cp * sy,
            cr * cp * sy - sr * sp * cy,
            cr * cp * cy + sr * sp * sy,
        ]
    )


def move_to_pose(
    env: SimEnv,
    position: np.ndarray,
    orientation: np.ndarray | None = None,
    *,
    config: PrimitiveConfig | None = None,
) -> PrimitiveResult:
    """Plan and execute a collision-free motion of the suction point to a pose.

    Args:
        env: The env.
        position: Target suction-point position (world, m).
        orientation: Quaternion ``(x, y, z, w)``, Euler ``(roll, pitch, yaw)`` as
            returned by ``get_orientation``, or None to leave it free.
        config: Primitive settings.
    """
    run = PrimitiveRun(env, config)
    position = np.asarray(position, dtype=float).reshape(3)
    orn = None
    if orientation is not None:
        orn = np.asarray(orientation, dtype=float).ravel()
        if orn.size == 3:
            orn = _quat_from_euler(orn)
        elif orn.size != 4:
            raise ValueError(
                f"orientation must be a quaternion (4) or Euler angles (3), got {orn.size} values"
            )
        orn = orn / np.linalg.norm(orn)
    reason = ""
    for attempt in range(2):
        run.attempts += 1
        reason = run.move(position, orn, attempt=attempt)
        if not reason or reason.startswith("planning failed"):
            break
        run.notes.append(reason)
    return run.result(not reason, reason)
