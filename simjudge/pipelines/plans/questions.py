"""Next-step (Q2) and state-estimation (Q3) questions from real executions.

Q2: the reference plan runs in the simulator; after each prefix the real state decides the
DAG frontier: the first reference step that is not done (a step is done when it was
executed and every milestone it should achieve was really reached). A proposed next step
is scored against the frontier's writings: skill 0/1, object 0/0.5/1, parameter 0/0.5/1,
the item 0 when skill or object is 0, else 10·(skill + object + parameter)/3.

Q3: yes/no "is this true now?" about each milestone after each executed step, on the clean
reference execution and on one with an early stop (so that executed steps can have
failed); the answer is the predicate on the real state, so any judge's reply is scored
exactly. With ``images``, each item carries a rendered PNG of that state (the exterior
camera; :func:`add_q2_images` does the same for the next-step items).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from .faults import key_step
from .groundtruth import TaskPlan
from .matching import best_score
from .physical import ExecutionFault, PhysicalRun, PhysicalRunner
from .schema import PlanError, parse_node

__all__ = ["add_q2_images", "q2_items", "q2_score", "q3_items", "render_frame"]


def _reached_before(run: PhysicalRun, k: int) -> set[str]:
    return {m for record in run.completion.steps[:k] for m in record.reached}


def q2_items(plan: TaskPlan, reference_run: PhysicalRun) -> list[dict[str, Any]]:
    """One next-step item per executed prefix of the reference plan (0 .. n−1 steps)."""
    steps = plan.plan.steps
    items = []
    for k in range(len(steps)):
        reached = _reached_before(reference_run, k)
        frontier = next(
            (j for j, s in enumerate(steps)
             if not (j < k and all(m in reached for m in s.achieves))),
            None,
        )
        if frontier is None:
            continue
        items.append({
            "task": plan.env_id, "prefix": k,
            "executed": [s.step for s in steps[:k]],
            "reached": sorted(reached),
            "frontier": [steps[frontier].step, *steps[frontier].alternatives],
        })
    return items


def q2_score(plan: TaskPlan, item: dict[str, Any], answer: str) -> dict[str, float]:
    """Skill, object, parameter and item score (0–10) of a proposed next step."""
    try:
        node = parse_node(answer)
    except PlanError:
        return {"skill": 0.0, "object": 0.0, "param": 0.0, "score": 0.0}
    best = best_score(plan, node, [parse_node(t) for t in item["frontier"]])
    zero = best.skill == 0.0 or best.object == 0.0
    score = 0.0 if zero else 10.0 * (best.skill + best.object + best.param) / 3.0
    return {"skill": best.skill, "object": best.object, "param": best.param,
            "score": round(score, 3)}


def render_frame(runner: PhysicalRunner, state: Any, path: Path) -> str:
    """Render the exterior (scene's first) camera at ``state`` (None: the reset state) to a PNG."""
    from PIL import Image

    if state is None:
        runner.env.reset(seed=runner.seed)
    else:
        runner.env.set_state(state)
    camera = runner.env.scene_config.cameras[0].name
    rgb = np.asarray(runner.env.render_camera(camera).rgb, dtype=np.uint8)
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(rgb[..., :3]).save(path, "PNG")
    return str(path)


def add_q2_images(items: list[dict[str, Any]], runner: PhysicalRunner, reference_run: PhysicalRun,
                  image_dir: Path) -> None:
    """Give each next-step item the PNG of the real state after its executed prefix."""
    for item in items:
        k = int(item["prefix"])
        state = reference_run.states[k - 1] if k else None
        item["image"] = render_frame(runner, state, image_dir / f"{item['task']}_prefix_{k}.png")


def q3_items(plan: TaskPlan, runner: PhysicalRunner, reference_run: PhysicalRun,
             image_dir: Path | None = None, seed: int = 0) -> list[dict[str, Any]]:
    """Yes/no state questions after every step of the clean and an early-stopped execution."""
    steps = plan.reference_steps()
    nodes = [parse_node(s) for s in steps]
    faulty = runner.run(nodes, fault=ExecutionFault("early_stop", key_step(plan, last=True), seed),
                        snapshots=image_dir is not None)
    items = []
    for source, run in (("reference", reference_run), ("early_stop", faulty)):
        for k, holds in enumerate(run.holds_after, start=1):
            image = None
            if image_dir is not None and run.states:
                image = render_frame(runner, run.states[k - 1],
                                     image_dir / f"{plan.env_id}_{source}_{k}.png")
            for milestone in plan.milestones:
                items.append({
                    "task": plan.env_id, "source": source, "executed": steps[:k],
                    "milestone": milestone.name,
                    "question": f"Is it true now that: {milestone.name}?",
                    "answer": bool(holds[milestone.name]), "image": image,
                })
    return items
