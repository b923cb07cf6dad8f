"""The command tree of ``simjudge``: every command's config class and handler.

Every command's options are a config dataclass (:mod:`simjudge.configs` for the listings,
:mod:`simjudge.pipelines.configs` and :class:`~simjudge.pipelines.judge_bench.JudgeBenchConfig` for
the pipelines); the parser is generated from them (:mod:`simjudge.cli_configs`), so flags,
defaults and help are written once. Importing this module imports every config; the console
script (:mod:`simjudge.cli`) imports only the chosen command's module.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from simjudge.cli_arena import ARENA_COMMANDS, ARENA_GROUPS
from simjudge.cli_audit import AUDIT_COMMANDS, AUDIT_GROUPS
from simjudge.cli_configs import Command, record
from simjudge.cli_demos import DEMOS_COMMANDS, DEMOS_GROUPS
from simjudge.cli_judges import JUDGES_COMMANDS, JUDGES_GROUPS
from simjudge.cli_loop import LOOP_COMMANDS, LOOP_GROUPS
from simjudge.cli_plan import PLAN_COMMANDS, PLAN_GROUPS
from simjudge.configs import (
    AssetsGenerateConfig,
    AssetsListConfig,
    AssetsShowConfig,
    RenderConfig,
    SkillsListConfig,
    SkillsReplayConfig,
    TasksListConfig,
)
from simjudge.pipelines.configs import DemoConfig, ExecuteConfig
from simjudge.pipelines.goal_report import GoalConfig, goal_command
from simjudge.pipelines.judge_bench import JudgeBenchConfig
from simjudge.pipelines.robogen.command import ImportRobogenConfig, run_import

__all__ = ["COMMANDS", "CORE_COMMANDS", "CORE_GROUPS", "GROUPS"]


# ----------------------------------------------------------------------------------
# command implementations (thin: all work happens in the library)
# ----------------------------------------------------------------------------------
def _assets_list(config: AssetsListConfig) -> int:
    from simjudge.envs.catalogue import default_catalogue

    entries = default_catalogue().entries()
    if config.json:
        rows = [
            {
                "asset_id": e.asset_id,
                "category": e.category,
                "kind": e.kind,
                "urdf": str(e.urdf_path),
                "movable_joints": [j.name for j in e.tree.movable_joints] if e.tree else [],
            }
            for e in entries
        ]
        print(json.dumps(rows, indent=2))
        return 0
    articulated = [e for e in entries if e.kind == "articulated"]
    cats = sorted({e.category for e in articulated})
    for cat in sorted({e.category for e in entries}):
        ids = [e.asset_id for e in entries if e.category == cat]
        print(f"{cat:18s} {len(ids):3d}  {', '.join(ids)}")
    print(f"{len(cats)} articulated categories, {len(articulated)} articulated instances, "
          f"{len(entries) - len(articulated)} other assets")
    return 0


def _assets_show(config: AssetsShowConfig) -> int:
    from simjudge.envs.scene_builder import resolve_asset

    entry = resolve_asset(config.asset_id)
    print(f"{entry.asset_id} ({entry.category}, {entry.kind})\nURDF: {entry.urdf_path}")
    if entry.tree is not None:
        print(entry.tree.to_text())
    return 0


def _assets_generate(config: AssetsGenerateConfig) -> int:
    from simjudge.envs.assetgen import generate_all
    from simjudge.envs.catalogue import ASSETS_DIR

    out = Path(config.out) if config.out else ASSETS_DIR
    generate_all(out)
    print(f"wrote assets to {out}")
    return 0


def _tasks_list(config: TasksListConfig) -> int:
    from simjudge.tasks.spec import load_composed, load_library

    tasks = load_library() + load_composed()  # every registered id
    if config.json:
        print(json.dumps([t.model_dump(mode="json", include={"env_id", "name", "description", "asset", "tags"}) for t in tasks], indent=2))
        return 0
    for t in tasks:
        print(f"simjudge/{t.env_id:26s} {t.name:26s} {t.asset:22s} {t.description}")
    print(f"{len(tasks)} tasks")
    return 0


def _render(config: RenderConfig) -> int:
    import imageio.v2 as imageio

    from simjudge.tasks.spec import make_task_env

    env = make_task_env(config.task, render_mode="rgb_array", camera=config.camera)
    try:
        env.reset(seed=config.seed)
        image = env.render()
    finally:
        env.close()
    Path(config.out).parent.mkdir(parents=True, exist_ok=True)
    imageio.imwrite(config.out, image)
    print(f"wrote {config.out} ({image.shape[1]}x{image.shape[0]})")
    return 0


def _demo(config: DemoConfig) -> int:
    from simjudge.envs.backends import render_problem
    from simjudge.skills.rollout import run_demo

    summary = run_demo(config.task, config.out, config.seed, config=record("demo", config))
    verdict = "success" if summary.success else "failure"
    skipped = render_problem()
    print(f"{summary.task}: {verdict} after {summary.steps} steps "
          f"(final progress {summary.progress[-1]:.2f}); wrote {config.out}/"
          + ("" if skipped else "rollout.mp4, ") + "progress.png, summary.json, config.json")
    if skipped:
        print(f"  video skipped: {skipped}")
    return 0 if summary.success else 1


def _execute(config: ExecuteConfig) -> int:
    from simjudge.envs.backends import render_problem
    from simjudge.pipelines.execute_run import run_execute

    try:
        summary = run_execute(config, show=print)
    except FileNotFoundError as exc:
        print(f"simjudge: error: {exc}", file=sys.stderr)
        return 2
    skipped = render_problem()
    for v in summary.verdicts:
        status = "ok  " if v.success else "FAIL"
        why = f" - {v.reason}" if v.reason else ""
        print(f"[{status}] {v.index:02d} {v.kind:9s} {v.name} ({v.steps} steps, "
              f"{v.wall_time_s:.1f} s){why}")
    print(f"{summary.task}: {'VERIFIED' if summary.task_success else 'NOT VERIFIED'} "
          f"({summary.verdict}: claimed {summary.claimed_success}, verified "
          f"{summary.verified_success}); wrote {config.out}/verdicts.jsonl, summary.json"
          + (", solution.mp4" if config.video and not skipped else ""))
    if config.video and skipped:
        print(f"  video skipped: {skipped}")
    if not summary.task_success:
        print(f"  why: {summary.reason}")
    return 0 if summary.task_success else 1


def _skills_list(config: SkillsListConfig) -> int:
    from simjudge.skills.library import SkillLibrary

    library = SkillLibrary(config.root)
    records = library.list()
    if config.json:
        print(json.dumps([{"id": r.id, "kind": r.kind, "task": r.task, "name": r.name,
                           "metrics": r.metrics, "path": r.path} for r in records], indent=2))
        return 0
    for r in records:
        print(f"{r.id:60s} {r.kind:9s} {r.task:22s} steps={r.metrics.get('steps')}")
    print(f"{len(records)} skills in {library.root}")
    return 0


def _skills_replay(config: SkillsReplayConfig) -> int:
    from simjudge.skills.library import SkillLibrary

    result = SkillLibrary(config.root).replay(config.skill_id, video=config.video)
    outcome = "" if result.success is None else f", success={result.success}"
    print(f"{result.skill_id}: replayed {result.steps} steps{outcome}, largest difference to "
          f"the recorded end state {result.state_error:.2e}"
          + (f"; wrote {result.video}" if result.video else ""))
    return 0


def _judge_bench(config: JudgeBenchConfig) -> int:
    from simjudge.pipelines.judge_bench import run_judge_bench

    run_judge_bench(config)
    out = Path(config.out)
    print((out / "judge_bench.md").read_text())
    print(f"wrote {out / 'judge_bench.json'} and {out / 'judge_bench.md'} "
          f"(rollouts cached in {out / 'rollouts'})")
    return 0


# ----------------------------------------------------------------------------------
# the command tree: path -> (config class, handler); the parser is generated from it
# ----------------------------------------------------------------------------------
CORE_GROUPS: dict[tuple[str, ...], str] = {
    ("assets",): "the articulated asset catalogue",
    ("tasks",): "the built-in task library",
    ("skills",): "the skill library on disk",
}
"""The groups of the commands defined here."""

GROUPS: dict[tuple[str, ...], str] = {
    **CORE_GROUPS,
    **LOOP_GROUPS,
    **JUDGES_GROUPS,
    **AUDIT_GROUPS,
    **ARENA_GROUPS,
    **PLAN_GROUPS,
    **DEMOS_GROUPS,
}
"""Command groups and their help."""

CORE_COMMANDS: dict[tuple[str, ...], Command] = {
    ("assets", "list"): Command(AssetsListConfig, _assets_list),
    ("assets", "show"): Command(AssetsShowConfig, _assets_show),
    ("assets", "generate"): Command(AssetsGenerateConfig, _assets_generate),
    ("tasks", "list"): Command(TasksListConfig, _tasks_list),
    ("goal",): Command(GoalConfig, goal_command),
    ("render",): Command(RenderConfig, _render),
    ("demo",): Command(DemoConfig, _demo),
    ("execute",): Command(ExecuteConfig, _execute),
    ("import-robogen",): Command(ImportRobogenConfig, run_import),
    ("skills", "list"): Command(SkillsListConfig, _skills_list),
    ("skills", "replay"): Command(SkillsReplayConfig, _skills_replay),
    ("judge-bench",): Command(JudgeBenchConfig, _judge_bench),
}
"""The commands defined here (assets, tasks, goal, render, demo, execute, ...)."""

COMMANDS: dict[tuple[str, ...], Command] = {
    **CORE_COMMANDS,
    **LOOP_COMMANDS,
    **JUDGES_COMMANDS,
    **AUDIT_COMMANDS,
    **ARENA_COMMANDS,
    **PLAN_COMMANDS,
    **DEMOS_COMMANDS,
}
"""Every command: its path, config class and handler."""
