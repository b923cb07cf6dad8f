"""Cost of one call of compiled generated code on a live env view, side by side.

For two generated-style programs on the task's env (the success condition of
``bench/judge_overhead.py`` and a RoboGen-style reward with a helper function), prints
the microseconds per call of:

- ``plain``: the same source exec'd as ordinary Python over the raw state API (no checks,
  no guards, no limits: the floor, never used for generated code);
- ``inprocess``: :func:`~simjudge.envs.codegen.compile_success` /
  :func:`~simjudge.envs.codegen.compile_reward` in-process mode (guards, call budget,
  deadline), its constant state-API calls resolved into the env's per-step reading;
- ``unresolved``: the same compiled against the same functions under new identities, so no
  call is resolved (every call goes through the state-API wrapper, every operator through
  its guard: what ``inprocess`` did before the resolution);
- ``subprocess``: the same in a bounded worker process, the view snapshotted per call
  (``--subprocess`` only: it is slower by design).

Calls alternate in rounds so that machine noise hits all alike; the numbers are medians
over rounds of the process's CPU time (``--clock wall`` for wall time). The last lines are
``inprocess/plain: X`` per program.

Usage: ``python bench/codegen_call.py [--task OpenDrawer-v0] [--calls 2000] [--rounds 7]
[--subprocess]``
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

from judge_overhead import success_code  # the bench's own success condition (bench/ is on sys.path)

from simjudge.envs.codegen import compile_reward, compile_success
from simjudge.envs.state_api import STATE_API
from simjudge.tasks.spec import load_task, make_task_env

CLOCKS = {"cpu": time.process_time, "wall": time.perf_counter}


def reward_code(task: str) -> str:
    """A RoboGen-style reward: distance to a link plus the joint's progress."""
    goal = load_task(task).goal
    obj = goal.object if goal is not None else load_task(task).object
    joint = getattr(goal, "joint", None) or "joint_0"
    return f'''
def closeness(a, b):
    return -float(np.linalg.norm(a - b))

def _compute_reward(self):
    eef = get_eef_pos(self)[0]
    lo, hi = get_bounding_box(self, "{obj}")
    angle = get_joint_state(self, "{obj}", "{joint}")
    low, high = get_joint_limit(self, "{obj}", "{joint}")
    progress = (angle - low) / (high - low)
    reward = closeness(eef, (lo + hi) / 2) + 5 * progress
    return reward, progress > 0.9
'''


def plain(source: str, kind: str) -> Callable[[Any], Any]:
    """The source as ordinary Python over the raw state API (the floor)."""
    import math

    import numpy as np

    namespace: dict[str, Any] = {"np": np, "math": math}
    namespace.update(STATE_API)
    code = compile(source, "<plain>", "exec")
    if kind == "success":

        def run_block(view: Any) -> Any:
            scope = dict(namespace, self=view)
            exec(code, scope)  # noqa: S102 - our own benchmark source
            return scope["success"]

        return run_block
    exec(code, namespace)  # noqa: S102 - our own benchmark source
    return namespace["_compute_reward"]


def per_call_us(fn: Callable[[Any], Any], view: Any, calls: int, clock: Callable[[], float]) -> float:
    """Mean microseconds per call over ``calls`` calls."""
    start = clock()
    for _ in range(calls):
        fn(view)
    return 1e6 * (clock() - start) / calls


def _forward(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` under a new identity: the compiler resolves only the state API's own functions."""
    return lambda view, *args: fn(view, *args)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--task", default="OpenDrawer-v0")
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="cpu")
    parser.add_argument("--subprocess", action="store_true")
    args = parser.parse_args()
    clock = CLOCKS[args.clock]
    env = make_task_env(args.task)
    env.reset(seed=0)
    view = env.view
    programs = {
        "success": (success_code(args.task), compile_success),
        "reward": (reward_code(args.task), compile_reward),
    }
    print(f"task: {args.task}  calls/round: {args.calls}  rounds: {args.rounds}  "
          f"clock: {args.clock}")
    summary = []
    for name, (source, compile_fn) in programs.items():
        variants: dict[str, Callable[[Any], Any]] = {
            "plain": plain(source, name),
            "inprocess": compile_fn(source, STATE_API),
            "unresolved": compile_fn(source, {n: _forward(f) for n, f in STATE_API.items()}),
        }
        workers = []
        if args.subprocess:
            worker = compile_fn(source, STATE_API, mode="subprocess")
            workers.append(worker)
            variants["subprocess"] = worker
        expected = variants["plain"](view)
        for label, fn in variants.items():
            got = fn(view)
            assert got == expected or (name == "success" and bool(got) == bool(expected)), (
                f"{label} returned {got!r}, plain returned {expected!r}"
            )
            per_call_us(fn, view, min(200, args.calls), clock)  # warm up
        times: dict[str, list[float]] = {label: [] for label in variants}
        for _ in range(args.rounds):
            for label, fn in variants.items():
                n = args.calls if label != "subprocess" else max(1, args.calls // 10)
                times[label].append(per_call_us(fn, view, n, clock))
        for worker in workers:
            worker.close()
        medians = {label: statistics.median(ts) for label, ts in times.items()}
        print(f"{name}: " + "  ".join(f"{label} {us:.1f} us/call" for label, us in medians.items()))
        summary.append(f"{name} inprocess/plain: {medians['inprocess'] / medians['plain']:.2f}  "
                       f"unresolved/inprocess: {medians['unresolved'] / medians['inprocess']:.2f}")
    env.close()
    for line in summary:
        print(line)


if __name__ == "__main__":
    main()
