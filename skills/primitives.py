"""RoboGen's motion primitives, executed physically in a :class:`~simjudge.envs.SimEnv`.

Why physically: a primitive's outcome must be what the simulation does, not
what the plan promised. Each primitive plans with :class:`MotionPlanner` (which
never changes the world), then commands the arm along the interpolated joint
path one control step (``env.frameskip`` physics steps) per waypoint, so the
world, including anything held by suction, really moves; ``env.elapsed_steps``
counts those control steps. Grasps follow RoboGen: pre-contact pose 3 cm out
along the surface normal, straight-line move in until contact, suction on, and a
check that suction holds the intended link; a failed grasp sample is retried
with the next one.

Names and arguments match RoboGen so generated code such as
``rgbs, final_state = grasp_object_link(self, "Cabinet", "link_1")`` runs once the
executor binds ``self`` to the env: a :class:`PrimitiveResult` unpacks to
``(frames, final_state)``. Unknown object or link names raise
:class:`~simjudge.envs.state_api.UnknownNameError` listing the valid names; every
other failure is a result with ``success=False`` and a reason.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from simjudge.envs.scene_builder import SceneObject
from simjudge.envs.sim_env import SimEnv
from simjudge.envs.sim_state import SimState
from simjudge.envs.state_api import UnknownNameError
from simjudge.envs.transforms import quat_angle_between

from .grasping import GraspCandidate, grasp_candidates, link_surface_samples
from .planning import MotionPlanner, PlannerConfig, PlanResult

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


@dataclass
class PrimitiveConfig:
    """Settings shared by the primitives.

    Attributes:
        planner: Motion-planner settings (planner, budget, seed, margins).
        standoff: Gap (m) between finger tips and surface at the pre-contact pose (RoboGen: 0.03).
        approach: Gripper axis for side faces: ``auto``, ``straight`` or ``tilted``.
        max_grasps: Grasp samples tried before giving up.
        press_depth: How far (m) past the surface the contact motion aims.
        contact_step: Suction-point travel (m) per control step while moving in.
        contact_distance: The target link must be this close (m) to the finger pads
            before suction turns on.
        grasp_ik_tries: IK restarts per grasp sample (other samples remain if one
            is out of reach, so fewer than a full ``planner.ik_tries`` are spent).
        settle_steps: Control steps allowed at the end of a path to converge.
        track_tolerance: Joint error (rad) counted as arrived.
        lag_tolerance: Joint error (rad) beyond which the follower re-commands the
            same waypoint instead of advancing, so the arm stays near the
            validated path when the position controller lags.
        max_wait: Extra control steps allowed per waypoint for catching up.
        abort_error: Joint error (rad) left after waiting that means the arm is
            blocked; the path is abandoned.
        release_steps: Control steps after suction turns off (objects settle).
        pose_tolerance: Position error (m) at which a reached pose counts as reached.
        record: Render RGB frames while executing.
        record_every: Keep one frame every this many control steps.
        cache_dir: Optional disk cache for grasp surface samples.
    """

    planner: PlannerConfig = field(default_factory=PlannerConfig)
    standoff: float = 0.03
    approach: str = "auto"
    max_grasps: int = 5
    grasp_ik_tries: int = 60
    press_depth: float = 0.01
    contact_step: float = 0.004
    contact_distance: float = 0.004
    settle_steps: int = 30
    track_tolerance: float = 0.01
    lag_tolerance: float = 0.03
    max_wait: int = 10
    abort_error: float = 0.15
    release_steps: int = 5
    pose_tolerance: float = 0.015
    record: bool = False
    record_every: int = 2
    cache_dir: str | None = None


@dataclass
class PrimitiveResult:
    """What a primitive did.

    Unpacks as RoboGen's ``(rgbs, final_state)``: ``frames, state = result``.

    Attributes:
        success: Whether the primitive achieved its purpose (pose reached, link held, ...).
        reason: Why not (empty on success).
        steps: Env control steps executed (each ``env.frameskip`` physics steps).
        planning_time_s: Wall time spent planning (IK, OMPL, validation).
        exec_time_s: Wall time spent stepping physics (and rendering).
        frames: RGB frames ``(H, W, 3)`` when recording, else empty.
        final_state: ``env.get_state()`` at the end.
        attempts: Plans (or grasp samples, for grasps) tried.
        grasped: ``(object, link)`` held by suction at the end, or None.
        details: Per-attempt reasons and the last plan's facts.
    """

    success: bool
    reason: str = ""
    steps: int = 0
    planning_time_s: float = 0.0
    exec_time_s: float = 0.0
    frames: list[np.ndarray] = field(default_factory=list)
    final_state: SimState | None = None
    attempts: int = 0
    grasped: tuple[str, str] | None = None
    details: dict[str, Any] = field(default_factory=dict)

    def __iter__(self) -> Iterator[Any]:
        """RoboGen's return convention: ``rgbs, final_state = primitive(...)``."""
        return iter((self.frames, self.final_state))


class _Run:
    """Bookkeeping of one primitive call: control steps, frames, timers, reasons."""

    def __init__(self, env: SimEnv, config: PrimitiveConfig | None) -> None:
        self.env = env
        self.config = config or PrimitiveConfig()
        self.robot = env.scene.robot
        self.steps = 0
        self.plan_time = 0.0
        self.exec_time = 0.0
        self.attempts = 0
        self.frames: list[np.ndarray] = []
        self.notes: list[str] = []
        self.plan: PlanResult | None = None
        if self.config.record:
            self._frame()

    def _frame(self) -> None:
        env = self.env
        if env.render_mode == "rgb_array":
            self.frames.append(env.render())
        else:
            self.frames.append(env.render_camera(env.scene_config.cameras[0].name).rgb)

    def step(self, qpos: np.ndarray) -> None:
        """One control step towards arm joint targets ``qpos``."""
        t0 = time.perf_counter()
        self.robot.command(qpos)
        self.env.backend.step(self.env.frameskip)
        self.env.elapsed_steps += 1
        self.steps += 1
        if self.config.record and self.steps % max(1, self.config.record_every) == 0:
            self._frame()
        self.exec_time += time.perf_counter() - t0

    def planner(self, attempt: int = 0, ik_tries: int | None = None) -> MotionPlanner:
        changes: dict[str, Any] = {}
        if attempt:
            changes["seed"] = self.config.planner.seed + 1000 * attempt
        if ik_tries is not None:
            changes["ik_tries"] = min(ik_tries, self.config.planner.ik_tries)
        return MotionPlanner(self.env.scene, replace(self.config.planner, **changes))

    def result(self, success: bool, reason: str = "") -> PrimitiveResult:
        if self.config.record and (not self.frames or self.steps % max(1, self.config.record_every)):
            self._frame()
        details: dict[str, Any] = {"notes": self.notes}
        if self.plan is not None:
            details["plan"] = {
                "success": self.plan.success,
                "reason": self.plan.reason,
                "planner": self.plan.planner,
                "waypoints": len(self.plan.path),
                "validity_checks": self.plan.validity_checks,
                "ik_tries": self.plan.ik_tries,
            }
        return PrimitiveResult(
            success=success,
            reason=reason,
            steps=self.steps,
            planning_time_s=self.plan_time,
            exec_time_s=self.exec_time,
            frames=self.frames,
            final_state=self.env.get_state(),
            attempts=self.attempts,
            grasped=self.env.view.grasped(),
            details=details,
        )

    # motion -----------------------------------------------------------------------------
    def follow(self, path: np.ndarray) -> str:
        """Command the arm along ``path``; a reason if it got blocked, else ''."""
        c = self.config
        for i, q in enumerate(path[1:], start=1):
            self.step(q)
            error = float(np.max(np.abs(self.robot.arm_qpos() - q)))
            for _ in range(c.max_wait):
                if error <= c.lag_tolerance:
                    break
                self.step(q)
                error = float(np.max(np.abs(self.robot.arm_qpos() - q)))
            if error > c.abort_error:
                return f"arm blocked at waypoint {i}/{len(path) - 1} (joint error {error:.2f} rad)"
        goal = path[-1]
        for _ in range(c.settle_steps):
            if float(np.max(np.abs(self.robot.arm_qpos() - goal))) <= c.track_tolerance:
                break
            self.step(goal)
        return ""

    def move(
        self,
        position: np.ndarray,
        orientation: np.ndarray | None,
        attempt: int = 0,
        ik_tries: int | None = None,
    ) -> str:
        """Plan to a suction-point pose and execute; a failure reason or ''."""
        plan = self.planner(attempt, ik_tries).plan_to_pose(position, orientation)
        self.plan = plan
        self.plan_time += plan.planning_time_s
        if not plan.success:
            return "planning failed: " + plan.reason
        blocked = self.follow(plan.path)
        if blocked:
            return blocked
        pos, orn = self.robot.ee_pose()
        err = float(np.linalg.norm(pos - position))
        if err > self.config.pose_tolerance:
            return f"pose not reached: suction point {err:.3f} m from the target after execution"
        if orientation is not None and quat_angle_between(orn, orientation) > 0.15:
            return "pose not reached: gripper orientation off by more than 0.15 rad"
        return ""

    def contact(self, cand: GraspCandidate, accept: set[tuple[int, int]]) -> str:
        """Move in along the approach axis until the target is in suction reach; suction on."""
        c = self.config
        robot, static = self.robot, self.env.scene.static_bodies
        start = robot.ee_pose()[0].copy()
        end = cand.contact + cand.axis * c.press_depth
        travel = float(np.linalg.norm(end - start))
        for k in range(1, math.ceil(travel / c.contact_step) + 15):
            target = start + (end - start) * min(1.0, k * c.contact_step / max(travel, 1e-9))
            self.step(robot.differential_ik(target, cand.orientation))
            near = robot.suction_candidates(static)
            if any((b, lk) in accept and d <= c.contact_distance for d, b, lk in near):
                break
        else:
            return f"no contact with {cand.object_name}/{cand.link_name} after moving in {travel:.3f} m"
        attachment = robot.activate_suction(static)
        if attachment is None or (attachment.body, attachment.link) not in accept:
            held = None if attachment is None else (attachment.body, attachment.link)
            robot.release()
            return f"suction caught {held} instead of {cand.object_name}/{cand.link_name}"
        return ""


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


def _candidates(run: _Run, obj: SceneObject, links: list[str]) -> list[GraspCandidate]:
    c = run.config
    return grasp_candidates(
        run.env.scene, obj, links, c.standoff, c.approach, cache_dir=c.cache_dir
    )


# primitives ------------------------------------------------------------------------------------
def _approach(env: SimEnv, object_name: str, link_name: str | None, config) -> PrimitiveResult:
    run = _Run(env, config)
    obj = _object(env, object_name)
    cands = _candidates(run, obj, _links(env, obj, link_name))
    if not cands:
        return run.result(False, f"no graspable surface found on {object_name}/{link_name or 'any link'}")
    for cand in cands[: run.config.max_grasps]:
        run.attempts += 1
        reason = run.move(cand.pre_contact, cand.orientation, ik_tries=run.config.grasp_ik_tries)
        if not reason:
            run.notes.append(f"{cand.kind}: reached")
            return run.result(True)
        run.notes.append(f"{cand.kind}: {reason}")
    return run.result(False, f"could not reach a pre-contact pose of {object_name}: {run.notes[-1]}")


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
    run = _Run(env, config)
    obj = _object(env, object_name)
    links = _links(env, obj, link_name)
    accept = {(obj.body, obj.link_index[n]) for n in links}
    att = run.robot.attachment
    if att is not None and (att.body, att.link) in accept:
        return run.result(True)
    if att is not None:
        run.robot.release()
        run.notes.append("released what suction held before grasping")
    cands = _candidates(run, obj, links)
    if not cands:
        return run.result(False, f"no graspable surface found on {object_name}/{link_name or 'any link'}")
    for cand in cands[: run.config.max_grasps]:
        run.attempts += 1
        reason = run.move(
            cand.pre_contact, cand.orientation, run.attempts - 1, run.config.grasp_ik_tries
        )
        if not reason:
            reason = run.contact(cand, accept)
        run.notes.append(f"{cand.kind} at {np.round(cand.point, 3).tolist()}: {reason or 'grasped'}")
        if not reason:
            return run.result(True)
    return run.result(False, f"no grasp of {object_name}/{link_name or 'any link'} succeeded: {run.notes[-1]}")


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
    run = _Run(env, config)
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
    cr, sr, cp, sp, cy, sy = math.cos(r), math.sin(r), math.cos(p), math.sin(p), math.cos(y), math.sin(y)
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
    run = _Run(env, config)
    position = np.asarray(position, dtype=float).reshape(3)
    orn = None
    if orientation is not None:
        orn = np.asarray(orientation, dtype=float).ravel()
        if orn.size == 3:
            orn = _quat_from_euler(orn)
        elif orn.size != 4:
            raise ValueError(f"orientation must be a quaternion (4) or Euler angles (3), got {orn.size} values")
        orn = orn / np.linalg.norm(orn)
    reason = ""
    for attempt in range(2):
        run.attempts += 1
        reason = run.move(position, orn, attempt=attempt)
        if not reason or reason.startswith("planning failed"):
            break
        run.notes.append(reason)
    return run.result(not reason, reason)
