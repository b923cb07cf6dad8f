"""Milliseconds per RGB frame, stock vs decimated visual Panda, side by side in one run.

Builds the same task scene twice, once with pybullet_data's stock Panda (~100k visual
triangles) and once with the decimated visual Panda (``assets/robots/panda_lowpoly``, made by
``tools/decimate_panda.py``; same collision meshes, so the same physics), and renders the
scene camera at 128² and 256² with PyBullet's CPU renderer. The two scenes alternate frame
by frame, with the arm moved between frames, so load from other processes hits both alike.
Prints ms per frame (medians of rounds; the process's CPU time by default, ``--clock wall``
for wall time: the renderer runs in-process, so CPU time is what a frame costs whatever else
the machine runs) for each visual and size, and ends with
``speedup: X`` = stock ÷ decimated at 128² (target ≥ 5). ``--save DIR`` writes the 256²
frames of both as PNG.

Usage: ``python bench/render.py [--task OpenDrawer-v0] [--frames 20] [--rounds 3]
[--clock cpu|wall] [--save DIR]``
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import time
from pathlib import Path

import numpy as np

from simjudge.envs import robot
from simjudge.tasks.spec import make_task_env

__all__ = ["main"]

SIZES = (128, 256)
CLOCKS = {"cpu": time.process_time, "wall": time.perf_counter}


def _env(task: str, visual: str):
    """A task env whose Panda has ``visual`` (set while the scene is built)."""
    default = robot.PANDA_VISUAL
    robot.PANDA_VISUAL = visual
    try:
        env = make_task_env(task)
        env.reset(seed=0)
    finally:
        robot.PANDA_VISUAL = default
    assert env.unwrapped.scene.robot.visual == visual
    return env


def _frame_ms(env, size: int, clock=time.process_time) -> float:
    """Milliseconds (of ``clock``) of one RGB frame of the env's camera at ``size``²."""
    base = env.unwrapped
    camera = dataclasses.replace(base._camera, width=size, height=size)
    start = clock()
    base.backend.render(camera)
    return 1000.0 * (clock() - start)


def main() -> None:
    """Run the benchmark; print ms per frame and ``speedup: X``."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--task", default="OpenDrawer-v0")
    parser.add_argument("--frames", type=int, default=20, help="frames per size per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="cpu")
    parser.add_argument("--save", type=Path, default=None, help="write 256² PNGs here")
    args = parser.parse_args()
    clock = CLOCKS[args.clock]

    envs = {"stock": _env(args.task, "stock"), "decimated": _env(args.task, "lowpoly")}
    rng = np.random.default_rng(0)
    for env in envs.values():  # warm up: first frames build the renderer's caches
        _frame_ms(env, 128)
    rounds: dict[tuple[str, int], list[float]] = {(n, s): [] for n in envs for s in SIZES}
    for _ in range(args.rounds):
        spent: dict[tuple[str, int], list[float]] = {key: [] for key in rounds}
        for _ in range(args.frames):
            action = rng.uniform(-1, 1, size=7).astype(np.float32)
            for name, env in envs.items():
                env.step(action)
                for size in SIZES:
                    spent[(name, size)].append(_frame_ms(env, size, clock))
        for key, values in spent.items():
            rounds[key].append(statistics.median(values))
    ms = {key: statistics.median(values) for key, values in rounds.items()}

    if args.save is not None:
        from PIL import Image

        args.save.mkdir(parents=True, exist_ok=True)
        for name, env in envs.items():
            env.reset(seed=0)
            base = env.unwrapped
            camera = dataclasses.replace(base._camera, width=256, height=256)
            Image.fromarray(base.backend.render(camera).rgb).save(args.save / f"{name}_256.png")
    for env in envs.values():
        env.close()

    print(f"task: {args.task}  frames/round: {args.frames}  rounds: {args.rounds}  "
          f"clock: {args.clock}")
    for size in SIZES:
        stock, low = ms[("stock", size)], ms[("decimated", size)]
        print(f"{size}x{size}: stock {stock:.2f} ms/frame, decimated {low:.2f} ms/frame, "
              f"x{stock / low:.1f}")
    print(f"speedup: {ms[('stock', 128)] / ms[('decimated', 128)]:.1f}")


if __name__ == "__main__":
    main()
