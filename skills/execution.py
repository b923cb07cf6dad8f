"""Executing planned motions in a SimEnv: control steps, suction, contact, recording.

Why a module of its own: every primitive runs the same loop (plan, follow the
joint path with position control, move in to contact, keep count of steps and
time, render frames) and reports in the same :class:`PrimitiveResult`; the
primitives in :mod:`~simjudge.skills.primitives` only choose targets.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from simjudge.envs.sim_env import SimEnv
from simjudge.envs.sim_state import SimState
from simjudge.envs.transforms import quat_angle_between, quat_rotate

from .grasping import GraspCandidate
from .planning import MotionPlanner, PlannerConfig, PlanResult

__all__ = ["PrimitiveConfig", "PrimitiveResult", "PrimitiveRun"]


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


class PrimitiveRun:
    """One primitive call in progress: control steps, frames, timers and notes.

    It moves the arm only through the robot's public control calls and
    :meth:`SimEnv.advance <simjudge.envs.sim_env.SimEnv.advance>`, the same physics and
    suction rules as ``SimEnv.step``.
    """

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
        # the env's own suction rules: an overloaded weld lets go, and suction that is on
        # grips whatever comes into reach
        if self.env.advance():
            self.notes.append(f"suction lost (overloaded) at control step {self.steps + 1}")
        self.steps += 1
        if self.config.record and self.steps % max(1, self.config.record_every) == 0:
            self._frame()
        self.exec_time += time.perf_counter() - t0

    def planner(self, attempt: int = 0, ik_tries: int | None = None) -> MotionPlanner:
        """A motion planner on the env's scene, reseeded per retry ``attempt``.

        Args:
            attempt: Retry number; attempt k > 0 shifts the planner seed by 1000·k.
            ik_tries: Cap on the IK restarts (never above the configured ``ik_tries``).
        """
        changes: dict[str, Any] = {}
        if attempt:
            changes["seed"] = self.config.planner.seed + 1000 * attempt
        if ik_tries is not None:
            changes["ik_tries"] = min(ik_tries, self.config.planner.ik_tries)
        return MotionPlanner(self.env.scene, replace(self.config.planner, **changes))

    def result(self, success: bool, reason: str = "") -> PrimitiveResult:
        """Finish the run: the final frame, state, timers, notes and plan summary."""
        if self.config.record and (
            not self.frames or self.steps % max(1, self.config.record_every)
        ):
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
        free_roll: bool = False,
    ) -> str:
        """Plan to a suction-point pose and execute; a failure reason or ''."""
        planner = self.planner(attempt, ik_tries)
        plan = planner.plan_to_pose(position, orientation, free_roll=free_roll)
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
        if orientation is not None:
            z = np.array([0.0, 0.0, 1.0])
            off = (
                float(np.arccos(np.clip(quat_rotate(orn, z) @ quat_rotate(orientation, z), -1, 1)))
                if free_roll
                else quat_angle_between(orn, orientation)
            )
            if off > 0.15:
                return f"pose not reached: gripper orientation off by {off:.2f} rad"
        return ""

    def contact(self, cand: GraspCandidate, accept: set[tuple[int, int]]) -> str:
        """Move in along the approach axis until the target is in suction reach; suction on."""
        c = self.config
        robot, static = self.robot, self.env.scene.static_bodies
        start, orientation = (v.copy() for v in robot.ee_pose())  # roll as planned
        end = cand.contact + cand.axis * c.press_depth
        travel = float(np.linalg.norm(end - start))
        for k in range(1, math.ceil(travel / c.contact_step) + 15):
            target = start + (end - start) * min(1.0, k * c.contact_step / max(travel, 1e-9))
            self.step(robot.differential_ik(target, orientation))
            near = robot.suction_candidates(static)
            if any((b, lk) in accept and d <= c.contact_distance for d, b, lk in near):
                break
        else:
            where = f"{cand.object_name}/{cand.link_name}"
            return f"no contact with {where} after moving in {travel:.3f} m"
        attachment = robot.activate_suction(static)
        if attachment is None or (attachment.body, attachment.link) not in accept:
            held = None if attachment is None else (attachment.body, attachment.link)
            robot.release()
            return f"suction caught {held} instead of {cand.object_name}/{cand.link_name}"
        return ""
