"""Motion-planning primitives benchmark: success rate and planning time, BIT* vs RRTConnect.

Runs 50 seeded queries and executes each physically in its task's scene:

- 40 ``grasp_object_link`` queries cycling over 23 targets from the built-in tasks
  (drawer knobs, cabinet/microwave/oven/fridge/safe/room doors, a window, lids,
  a laptop screen, buttons, knobs, a faucet, a chair, and three rigid objects);
- 10 ``move_to_pose`` reach queries whose target is the suction-point pose of a
  seeded random collision-free arm configuration (reachable by construction).

Each query starts from a seeded random collision-free arm configuration around
home (``--spread`` rad), so queries differ in their start, OMPL seed and IK restarts. Planning time
is what the primitive spent planning (IK, OMPL, simplification, validation),
summed over its retries. Targets: grasp-link success ≥ 90 %, median planning
time ≤ 1 s (RoboGen budgets 8 s per plan).

Usage: ``python bench/planning.py [--queries 50] [--planners bitstar rrtconnect]
[--approach auto|straight|tilted] [--spread 0.25] [--backend pybullet|mujoco|sapien]``
"""

from __future__ import annotations

import argparse
import statistics
import time
from dataclasses import dataclass

import numpy as np

from simjudge.skills.collision import CollisionChecker, preserved_state
from simjudge.skills.planning import PlannerConfig
from simjudge.skills.primitives import PrimitiveConfig, grasp_object_link, move_to_pose
from simjudge.tasks.spec import make_task_env

GRASP_TARGETS: list[tuple[str, str, str]] = [
    ("OpenDrawer-v0", "StorageFurniture", "link_1"),
    ("OpenCabinetDoor-v0", "StorageFurniture", "link_1"),
    ("OpenMicrowaveDoor-v0", "Microwave", "link_1"),
    ("OpenOvenDoor-v0", "Oven", "link_1"),
    ("OpenRefrigeratorDoor-v0", "Refrigerator", "link_1"),
    ("OpenSafeDoor-v0", "Safe", "link_2"),
    ("OpenDoor-v0", "Door", "link_1"),
    ("OpenWindow-v0", "Window", "link_1"),
    ("OpenBoxLid-v0", "Box", "link_1"),
    ("OpenKettleLid-v0", "Kettle", "link_1"),
    ("OpenToiletLid-v0", "Toilet", "link_0"),
    ("OpenTrashCanLid-v0", "TrashCan", "link_1"),
    ("OpenLaptop-v0", "Laptop", "link_0"),
    ("PressButton-v0", "ButtonPanel", "link_0"),
    ("PressMicrowaveButton-v0", "Microwave", "link_2"),
    ("FlushToilet-v0", "Toilet", "link_1"),
    ("TurnOvenKnob-v0", "Oven", "link_2"),
    ("TurnFaucet-v0", "Faucet", "link_0"),
    ("TurnSafeDial-v0", "Safe", "link_1"),
    ("UnfoldChair-v0", "FoldingChair", "link_0"),
    ("PutCubeInBox-v0", "Cube", "base"),
    ("PutBreadInBowl-v0", "Bread", "base"),
    ("StackCubeOnCylinder-v0", "Cube", "base"),
]
REACH_TASKS = ("OpenDrawer-v0", "PutCubeInBox-v0", "OpenMicrowaveDoor-v0")


@dataclass
class Query:
    """One benchmark query."""

    kind: str
    task: str
    obj: str
    link: str
    seed: int


@dataclass
class Outcome:
    """What one query did."""

    query: Query
    success: bool
    planning_time_s: float
    steps: int
    attempts: int
    reason: str


def make_queries(n: int) -> list[Query]:
    """``n`` queries: 80 % grasps cycling over the targets, 20 % reaches."""
    n_reach = n // 5
    grasps = [
        Query("grasp", *GRASP_TARGETS[i % len(GRASP_TARGETS)], seed=i) for i in range(n - n_reach)
    ]
    reaches = [
        Query("reach", REACH_TASKS[i % len(REACH_TASKS)], "", "", seed=1000 + i)
        for i in range(n_reach)
    ]
    return grasps + reaches


def _random_valid(env, rng: np.random.Generator, spread: float) -> np.ndarray:
    """A seeded random collision-free arm configuration (``spread`` rad around home)."""
    robot = env.scene.robot
    home = robot.arm_qpos().copy()
    with preserved_state(env.backend):
        checker = CollisionChecker(env.scene)
        for _ in range(500):
            q = np.clip(home + rng.normal(0.0, spread, 7), robot.lower, robot.upper)
            if checker.is_valid(q):
                return q
    return home


def run_query(env, query: Query, planner: str, approach: str, spread: float) -> Outcome:
    """Reset, move the arm to the query's start, run the primitive."""
    env.reset()
    rng = np.random.default_rng(query.seed)
    env.scene.robot.reset_home(_random_valid(env, rng, spread))
    config = PrimitiveConfig(
        planner=PlannerConfig(planner=planner, seed=query.seed), approach=approach
    )
    if query.kind == "grasp":
        result = grasp_object_link(env, query.obj, query.link, config=config)
    else:
        goal = _random_valid(env, rng, 0.8)
        with preserved_state(env.backend):
            env.backend.reset_joint_states(env.scene.robot.body, env.scene.robot.arm_joints, goal)
            pos, orn = env.scene.robot.ee_pose()
            pos, orn = pos.copy(), orn.copy()
        result = move_to_pose(env, pos, orn, config=config)
    return Outcome(
        query, result.success, result.planning_time_s, result.steps, result.attempts, result.reason
    )


def _row(label: str, outs: list[Outcome]) -> str:
    if not outs:
        return f"{label:26s} {'-':>4s}"
    times = sorted(o.planning_time_s for o in outs)
    p90 = float(np.percentile(times, 90))
    rate = 100.0 * sum(o.success for o in outs) / len(outs)
    steps = statistics.mean(o.steps for o in outs)
    attempts = statistics.mean(o.attempts for o in outs)
    return (
        f"{label:26s} {len(outs):4d} {rate:8.1f} {statistics.median(times):10.3f} {p90:8.3f} "
        f"{steps:8.1f} {attempts:9.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--planners", nargs="+", default=["bitstar", "rrtconnect"])
    parser.add_argument("--approach", default="auto", choices=["auto", "straight", "tilted"])
    parser.add_argument(
        "--spread",
        type=float,
        default=0.25,
        help="std (rad) of the start configuration around home",
    )
    parser.add_argument("--verbose", action="store_true", help="print every query")
    parser.add_argument("--backend", default="pybullet", choices=["pybullet", "mujoco", "sapien"])
    args = parser.parse_args()
    queries = make_queries(args.queries)
    envs: dict[str, object] = {}
    results: dict[str, list[Outcome]] = {}
    start = time.perf_counter()
    for planner in args.planners:
        outs = results.setdefault(planner, [])
        for q in queries:
            env = envs.get(q.task) or envs.setdefault(q.task, make_task_env(q.task, backend=args.backend))
            out = run_query(env, q, planner, args.approach, args.spread)
            outs.append(out)
            if args.verbose or not out.success:
                flag = "ok  " if out.success else "FAIL"
                print(
                    f"  {flag} {planner:10s} {q.kind:5s} {q.task:24s} {q.obj}/{q.link} "
                    f"seed={q.seed} plan={out.planning_time_s:.2f}s {out.reason[:120]}"
                )
    wall = time.perf_counter() - start
    setup = f"backend={args.backend}, approach={args.approach}, spread={args.spread}"
    print(f"\n{args.queries} queries, {setup}, wall {wall:.0f} s")
    head = ("planner / kind", "n", "success%", "median_s", "p90_s", "steps", "attempts")
    widths = (26, 4, 8, 10, 8, 8, 9)
    pairs = enumerate(zip(head, widths, strict=True))
    cells = [f"{h:{w}s}" if k == 0 else f"{h:>{w}s}" for k, (h, w) in pairs]
    print(" ".join(cells))
    for planner, outs in results.items():
        for kind in ("grasp", "reach"):
            print(_row(f"{planner} / {kind}", [o for o in outs if o.query.kind == kind]))
        print(_row(f"{planner} / all", outs))
    for env in envs.values():
        env.close()


if __name__ == "__main__":
    main()
