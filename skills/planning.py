"""Collision-free arm motion planning with OMPL (BIT* as RoboGen, or RRTConnect).

Why OMPL in joint space: RoboGen's primitives plan over the seven Panda arm
joints with OMPL's BIT* and validate states by collision queries, and VERGSA
adopts the same settings; reproducing them keeps primitive success comparable.
What this module adds: every request runs inside a backend snapshot, so planning
never changes the simulation; seeds fix OMPL's sampler and the IK restarts, so
the same seed gives the same path; the planned path is simplified, interpolated
and re-validated densely, and a path that fails re-validation is re-planned
rather than executed; and an ordinary failure (unreachable pose, start or goal in
collision, time out) comes back as a :class:`PlanResult` with a reason instead
of an exception.

OMPL (``pip install simjudge[ompl]``, the 2.x wheel) is imported on first use.

Example:
    >>> from simjudge.tasks.spec import make_task_env
    >>> from simjudge.skills.planning import MotionPlanner, PlannerConfig
    >>> env = make_task_env("OpenDrawer-v0")
    >>> planner = MotionPlanner(env.scene, PlannerConfig(planner="rrtconnect", seed=1))
    >>> result = planner.plan_to_pose([0.0, 0.2, 0.35], None)
    >>> result.success, result.path.shape[1]
    (True, 7)
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from simjudge.envs.scene_builder import BuiltScene
from simjudge.envs.transforms import (
    quat_angle_between,
    quat_from_axis_angle,
    quat_multiply,
    quat_rotate,
)

from .collision import Collision, CollisionChecker, preserved_state
from .ompl_solve import OMPLNotInstalledError, import_ompl, solve_joint_path

__all__ = [
    "PLANNERS",
    "MotionPlanner",
    "OMPLNotInstalledError",
    "PlanResult",
    "PlannerConfig",
    "import_ompl",
    "interpolate_path",
]

PLANNERS: tuple[str, ...] = ("bitstar", "rrtconnect")
"""Supported OMPL planners: BIT* (RoboGen's choice, the default) and RRTConnect."""


@dataclass
class PlannerConfig:
    """Settings of a planning request.

    Attributes:
        planner: One of :data:`PLANNERS`.
        time_limit_s: OMPL time budget per attempt (RoboGen: 8 s).
        attempts: OMPL solves per request; each later attempt re-seeds and, for
            pose goals, draws a new IK goal.
        refine_time_s: Extra BIT* time spent improving the first solution (0 =
            stop at the first solution, which also makes the path independent of
            machine speed).
        margin: Arm-to-world clearance (m) counted as collision.
        self_margin: Clearance between non-adjacent arm links (m).
        held_margin: Clearance of a held object to the world (m).
        motion_resolution: Largest joint-space step (rad, L2) between states OMPL
            checks along an edge.
        validation_step: Largest per-joint step (rad) of the dense re-validation
            of the final path.
        max_joint_step: Largest per-joint step (rad) between interpolated
            waypoints (one control step each when executed).
        simplify: Shortcut and smooth the path with OMPL's simplifier.
        ik_tries: IK restarts (random rest poses) allowed per goal (RoboGen: 600).
        position_tolerance: IK goal position error allowed (m).
        orientation_tolerance: IK goal orientation error allowed (rad).
        escape_distance: Largest straight retreat (m) tried when the start is in
            collision (e.g. right after a grasp).
        limit_recovery: Largest excess over an arm joint limit (rad) that a start is moved
            back from (a hard push can drive a joint past its limit); more is an error.
        seed: Seeds OMPL's sampler and the IK restarts.
    """

    planner: str = "bitstar"
    time_limit_s: float = 8.0
    attempts: int = 3
    refine_time_s: float = 0.0
    margin: float = 0.01
    self_margin: float = 0.002
    held_margin: float = 0.005
    motion_resolution: float = 0.05
    validation_step: float = 0.02
    max_joint_step: float = 0.04
    simplify: bool = True
    ik_tries: int = 600
    position_tolerance: float = 0.005
    orientation_tolerance: float = 0.05
    escape_distance: float = 0.08
    limit_recovery: float = 0.15
    seed: int = 0

    def __post_init__(self) -> None:
        if self.planner not in PLANNERS:
            raise ValueError(
                f"planner={self.planner!r} is not supported; use one of {list(PLANNERS)}"
            )
        for name in ("time_limit_s", "motion_resolution", "validation_step", "max_joint_step"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be > 0, got {getattr(self, name)}")
        if self.attempts < 1 or self.ik_tries < 1:
            raise ValueError(
                f"attempts and ik_tries must be ≥ 1, got {self.attempts} and {self.ik_tries}"
            )


@dataclass
class PlanResult:
    """What a planning request produced.

    Attributes:
        success: Whether ``path`` is a validated collision-free path to the goal.
        reason: Why it failed (empty on success).
        path: Interpolated joint path ``(n, 7)`` from the start to the goal, with
            per-joint steps ≤ ``max_joint_step``; ``(0, 7)`` on failure.
        planning_time_s: Wall time of the whole request (IK, OMPL, simplification,
            validation).
        attempts: OMPL solves used.
        planner: Planner name.
        goal: Goal configuration (7), if one was found.
        waypoints: The simplified planner path before interpolation.
        validity_checks: Collision queries made.
        ik_tries: IK restarts used.
        details: Extra facts (e.g. ``escaped_start``, per-attempt statuses).
    """

    success: bool
    reason: str = ""
    path: np.ndarray = field(default_factory=lambda: np.zeros((0, 7)))
    planning_time_s: float = 0.0
    attempts: int = 0
    planner: str = ""
    goal: np.ndarray | None = None
    waypoints: np.ndarray = field(default_factory=lambda: np.zeros((0, 7)))
    validity_checks: int = 0
    ik_tries: int = 0
    details: dict[str, Any] = field(default_factory=dict)


def interpolate_path(waypoints: np.ndarray, max_step: float) -> np.ndarray:
    """Straight joint-space segments between waypoints, no joint moving more than ``max_step``.

    The first waypoint is kept; every segment ends exactly at its waypoint.
    """
    waypoints = np.asarray(waypoints, dtype=float)
    if len(waypoints) < 2:
        return waypoints.copy()
    out = [waypoints[:1]]
    for a, b in zip(waypoints[:-1], waypoints[1:], strict=True):
        n = max(1, math.ceil(float(np.max(np.abs(b - a))) / max_step - 1e-9))
        t = np.linspace(0.0, 1.0, n + 1)[1:, None]
        out.append(a + t * (b - a))
    return np.concatenate(out)


class MotionPlanner:
    """Plans arm motions in a built scene without changing it.

    Each request snapshots the backend, teleports the arm as needed to answer
    collision and IK queries, and restores the snapshot before returning.
    Objects (other than one held by suction) are obstacles at their current poses.

    Args:
        scene: The built scene (``env.scene``).
        config: Planner settings.
        ignore_bodies: Bodies left out of collision checks.
    """

    def __init__(
        self,
        scene: BuiltScene,
        config: PlannerConfig | None = None,
        ignore_bodies: tuple[int, ...] = (),
    ) -> None:
        self.scene = scene
        self.robot = scene.robot
        self.backend = scene.robot.backend
        self.config = config or PlannerConfig()
        self.ignore_bodies = tuple(ignore_bodies)
        import_ompl()  # fail early, with the install command, when OMPL is missing

    # public requests -------------------------------------------------------------------
    def plan(self, goal: np.ndarray, start: np.ndarray | None = None) -> PlanResult:
        """A validated path from ``start`` (the current arm) to the configuration ``goal``."""
        return self._request(start, lambda checker, rng, attempt: (np.asarray(goal, float), 0, ""))

    def plan_to_pose(
        self,
        position: np.ndarray,
        orientation: np.ndarray | None,
        start: np.ndarray | None = None,
        free_roll: bool = False,
    ) -> PlanResult:
        """A validated path to an IK solution of the suction-point pose.

        Goals come from IK with random restarts (seeded), kept only if in limits,
        accurate and collision-free; each attempt after the first draws a new goal.
        ``orientation=None`` leaves the orientation free; ``free_roll=True`` keeps
        only its approach axis (local +z) and lets restarts turn the gripper about
        it, which suction does not care about but a wide hand next to a panel does.
        """
        position = np.asarray(position, dtype=float)
        orn = None if orientation is None else np.asarray(orientation, dtype=float)

        def goal_fn(checker: CollisionChecker, rng: np.random.Generator, attempt: int):
            return self._ik_goal(checker, position, orn, rng, attempt == 0, free_roll)

        return self._request(start, goal_fn)

    def is_valid(self, qpos: np.ndarray) -> bool:
        """Whether ``qpos`` is collision-free in the current world (state unchanged)."""
        return self.first_collision(qpos) is None

    def first_collision(self, qpos: np.ndarray) -> Collision | None:
        """The first colliding pair at ``qpos`` in the current world (state unchanged)."""
        with preserved_state(self.backend):
            return self._checker().first_collision(np.asarray(qpos, float))

    def solve_ik(
        self, position: np.ndarray, orientation: np.ndarray | None
    ) -> tuple[np.ndarray | None, str]:
        """A collision-free IK solution of the pose (state unchanged) and a failure reason."""
        rng = np.random.default_rng(self.config.seed)
        with preserved_state(self.backend):
            q, _, reason = self._ik_goal(
                self._checker(), np.asarray(position, float), orientation, rng, first=True
            )
        return q, reason

    # internals --------------------------------------------------------------------------
    def _checker(self) -> CollisionChecker:
        c = self.config
        return CollisionChecker(
            self.scene, c.margin, c.self_margin, c.held_margin, self.ignore_bodies
        )

    def _names(self) -> dict[tuple[int, int | None], str]:
        """Names for collision reports: ``Cabinet/link_0``, ``robot link 5``, ``table``."""
        names: dict[tuple[int, int | None], str] = {(self.robot.body, None): "robot"}
        if self.scene.table is not None:
            names[(self.scene.table, -1)] = "table"
        names[(self.scene.ground, -1)] = "floor"
        for obj in self.scene.objects.values():
            names[(obj.body, None)] = obj.name
            names.update({(obj.body, i): f"{obj.name}/{n}" for n, i in obj.link_index.items()})
        return names

    def _request(self, start: np.ndarray | None, goal_fn: Callable) -> PlanResult:
        c = self.config
        t0 = time.perf_counter()
        result = PlanResult(False, planner=c.planner)
        with preserved_state(self.backend):
            checker = self._checker()
            q_start = self.robot.arm_qpos().copy() if start is None else np.asarray(start, float)
            prefix, q_start, reason = self._start(checker, q_start)
            if reason:
                result.reason = reason
            else:
                self._attempts(checker, q_start, goal_fn, result)
                if result.success and len(prefix):
                    result.path = np.concatenate([prefix[:-1], result.path])
                    result.details["escaped_start"] = True
            result.validity_checks = checker.checks
        result.planning_time_s = time.perf_counter() - t0
        return result

    def _attempts(self, checker, q_start, goal_fn, result: PlanResult) -> None:
        c = self.config
        rng = np.random.default_rng(c.seed)
        statuses = []
        for attempt in range(c.attempts):
            goal, tries, reason = goal_fn(checker, rng, attempt)
            result.ik_tries += tries
            if goal is None:
                result.reason = reason
                statuses.append(reason)
                break  # IK already exhausted its restarts: another attempt would repeat them
            hit = checker.first_collision(goal)
            if hit is not None:
                result.reason = "goal configuration is invalid: " + hit.describe(self._names())
                statuses.append(result.reason)
                continue
            result.goal = goal
            result.attempts += 1
            waypoints, status = self._solve(checker, q_start, goal, c.seed + attempt)
            if waypoints is None:
                result.reason = (
                    f"OMPL {c.planner} found no path ({status}) within {c.time_limit_s} s"
                )
                statuses.append(status)
                continue
            path, bad = self._validated(checker, waypoints)
            if path is None:
                assert bad is not None, "a rejected path comes with its collision"
                result.reason = "planned path failed dense re-validation: " + bad.describe(
                    self._names()
                )
                statuses.append("revalidation failed")
                continue
            result.success, result.reason = True, ""
            result.path, result.waypoints = path, waypoints
            statuses.append(status)
            break
        result.details["statuses"] = statuses

    def _start(
        self, checker: CollisionChecker, q: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, str]:
        """Planning start; a start in collision is first left by a short straight retreat."""
        hit = checker.first_collision(q)
        if hit is None:
            return np.zeros((0, 7)), q, ""
        if hit.kind == "limits":
            inside = np.clip(q, self.robot.lower + 1e-3, self.robot.upper - 1e-3)
            if np.max(np.abs(inside - q)) <= self.config.limit_recovery:
                # a hard push can drive a joint past its limit: first move back inside
                # (then, if still touching what it pushed, retreat as from any contact)
                back = interpolate_path(np.stack([q, inside]), self.config.max_joint_step)
                if checker.first_collision(inside) is None:
                    return back, inside, ""
                escape = self._escape(checker, inside)
                if escape is not None:
                    return np.concatenate([back, escape[1:]]), escape[-1], ""
            return (
                np.zeros((0, 7)),
                q,
                f"start configuration is outside the joint limits: {q.round(3)} (more than "
                f"{self.config.limit_recovery} rad out, or no retreat frees it once back inside)",
            )
        escape = self._escape(checker, q)
        if escape is None:
            return (
                np.zeros((0, 7)),
                q,
                (
                    "start configuration is in collision and no retreat of up to "
                    f"{self.config.escape_distance} m frees it: " + hit.describe(self._names())
                ),
            )
        return escape, escape[-1], ""

    def _escape(self, checker: CollisionChecker, q: np.ndarray) -> np.ndarray | None:
        """Straight retreat out of collision: back along the gripper axis, else straight up."""
        checker.place(q)
        pos, orn = self.robot.ee_pose()
        pos, orn = pos.copy(), orn.copy()
        back = -quat_rotate(orn, np.array([0.0, 0.0, 1.0]))
        for direction in (back, np.array([0.0, 0.0, 1.0])):
            for dist in np.arange(0.01, self.config.escape_distance + 1e-9, 0.01):
                checker.place(q)
                q_out = self._refine_ik(checker, pos + direction * dist, orn, q)
                if q_out is None or np.max(np.abs(q_out - q)) > 0.5:
                    continue
                if checker.first_collision(q_out) is None:
                    return interpolate_path(np.stack([q, q_out]), self.config.max_joint_step)
        return None

    def _refine_ik(
        self, checker: CollisionChecker, position, orientation, rest: np.ndarray
    ) -> np.ndarray | None:
        """IK from the arm's current configuration, polished over a few solves.

        Returns None if the pose is not reached within the tolerances.
        """
        c = self.config
        for _ in range(5):
            q = self.robot.solve_ik(position, orientation, rest=rest)
            checker.place(q)
            pos, orn = self.robot.ee_pose()
            pos_err = float(np.linalg.norm(pos - position))
            rot_err = 0.0 if orientation is None else quat_angle_between(orn, orientation)
            if pos_err <= c.position_tolerance and rot_err <= c.orientation_tolerance:
                return q
        return None

    def _ik_goal(
        self,
        checker: CollisionChecker,
        position: np.ndarray,
        orientation: np.ndarray | None,
        rng: np.random.Generator,
        first: bool,
        free_roll: bool = False,
    ) -> tuple[np.ndarray | None, int, str]:
        """A collision-free IK goal: from the current arm first, then random restarts."""
        c = self.config
        robot = self.robot
        seed_q = robot.arm_qpos().copy()
        inaccurate = colliding = 0
        last_hit: Collision | None = None
        for tries in range(1, c.ik_tries + 1):
            target = orientation
            if not (first and tries == 1):
                seed_q = rng.uniform(robot.lower, robot.upper)
                if free_roll and orientation is not None and tries % 2 == 0:
                    roll = quat_from_axis_angle(np.array([0.0, 0.0, rng.uniform(-np.pi, np.pi)]))
                    target = quat_multiply(orientation, roll)
            checker.place(seed_q)
            q = self._refine_ik(checker, position, target, seed_q)
            if q is None:
                inaccurate += 1
                continue
            last_hit = checker.first_collision(q)
            if last_hit is None:
                return q, tries, ""
            colliding += 1
        what = "" if last_hit is None else "; last: " + last_hit.describe(self._names())
        return (
            None,
            c.ik_tries,
            (
                f"no collision-free IK solution for position {np.round(position, 3).tolist()} "
                f"after {c.ik_tries} restarts ({inaccurate} did not reach the pose, "
                f"{colliding} collided{what})"
            ),
        )

    def _solve(
        self, checker: CollisionChecker, start: np.ndarray, goal: np.ndarray, seed: int
    ) -> tuple[np.ndarray | None, str]:
        """One OMPL solve; the (simplified) waypoints or None, and the planner status."""
        robot = self.robot
        return solve_joint_path(
            lambda q: checker.first_collision(q) is None,
            robot.lower,
            robot.upper,
            start,
            goal,
            self.config,
            seed,
        )

    def _validated(
        self, checker: CollisionChecker, waypoints: np.ndarray
    ) -> tuple[np.ndarray | None, Collision | None]:
        """Interpolate, then re-check densely (OMPL checked edges only at ``motion_resolution``)."""
        c = self.config
        dense = interpolate_path(waypoints, min(c.validation_step, c.max_joint_step))
        for q in dense[1:]:
            hit = checker.first_collision(q)
            if hit is not None:
                return None, hit
        return interpolate_path(waypoints, c.max_joint_step), None
