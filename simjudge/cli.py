"""The ``simjudge`` command line: parses arguments and calls library functions."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

__all__ = ["main", "build_parser"]


# ----------------------------------------------------------------------------------
# command implementations (thin: all work happens in the library)
# ----------------------------------------------------------------------------------
def _assets_list(args: argparse.Namespace) -> int:
    from simjudge.envs.catalogue import default_catalogue

    entries = default_catalogue().entries()
    if args.json:
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


def _assets_show(args: argparse.Namespace) -> int:
    from simjudge.envs.scene_builder import resolve_asset

    entry = resolve_asset(args.asset_id)
    print(f"{entry.asset_id} ({entry.category}, {entry.kind})\nURDF: {entry.urdf_path}")
    if entry.tree is not None:
        print(entry.tree.to_text())
    return 0


def _assets_generate(args: argparse.Namespace) -> int:
    from simjudge.envs.assetgen import generate_all
    from simjudge.envs.catalogue import ASSETS_DIR

    out = Path(args.out) if args.out else ASSETS_DIR
    generate_all(out)
    print(f"wrote assets to {out}")
    return 0


def _tasks_list(args: argparse.Namespace) -> int:
    from simjudge.tasks.spec import load_library

    tasks = load_library()
    if args.json:
        print(json.dumps([t.model_dump(mode="json", include={"env_id", "name", "description", "asset", "tags"}) for t in tasks], indent=2))
        return 0
    for t in tasks:
        print(f"simjudge/{t.env_id:26s} {t.name:26s} {t.asset:22s} {t.description}")
    print(f"{len(tasks)} tasks")
    return 0


def _render(args: argparse.Namespace) -> int:
    import imageio.v2 as imageio

    from simjudge.tasks.spec import make_task_env

    env = make_task_env(args.task, render_mode="rgb_array", camera=args.camera)
    try:
        env.reset(seed=args.seed)
        image = env.render()
    finally:
        env.close()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    imageio.imwrite(args.out, image)
    print(f"wrote {args.out} ({image.shape[1]}x{image.shape[0]})")
    return 0


def _demo(args: argparse.Namespace) -> int:
    from simjudge.skills.rollout import run_demo

    summary = run_demo(args.task, args.out, args.seed)
    verdict = "success" if summary.success else "failure"
    print(f"{summary.task}: {verdict} after {summary.steps} steps "
          f"(final progress {summary.progress[-1]:.2f}); wrote {args.out}/rollout.mp4, "
          f"progress.png, summary.json")
    return 0 if summary.success else 1


def _execute(args: argparse.Namespace) -> int:
    from simjudge.skills.executor import execute_solution
    from simjudge.skills.library import SkillLibrary
    from simjudge.tasks.spec import load_solution

    sac_config = None
    if args.n_envs != 1:
        from simjudge.skills.sac import SACConfig

        sac_config = SACConfig(n_envs=args.n_envs, vec_env="subproc")
    try:
        solution = load_solution(args.solution)
    except FileNotFoundError as exc:
        print(f"simjudge: error: {exc}", file=sys.stderr)
        return 2
    summary = execute_solution(
        solution,
        args.out,
        seed=args.seed,
        budget_steps=args.budget_steps,
        continue_on_failure=args.continue_on_failure,
        reward_solver=args.reward_solver,
        sac_config=sac_config,
        resume=not args.no_resume,
        video=not args.no_video,
        skills=SkillLibrary(args.skills) if args.skills else None,
    )
    for v in summary.verdicts:
        status = "ok  " if v.success else "FAIL"
        why = f" - {v.reason}" if v.reason else ""
        print(f"[{status}] {v.index:02d} {v.kind:9s} {v.name} ({v.steps} steps, "
              f"{v.wall_time_s:.1f} s){why}")
    goal = {None: "no built-in goal", True: "goal holds", False: "goal does not hold"}
    print(f"{summary.task}: {'success' if summary.task_success else 'failure'} "
          f"({goal[summary.verified_success]}); wrote {args.out}/verdicts.jsonl, summary.json"
          + ("" if args.no_video else ", solution.mp4"))
    return 0 if summary.task_success else 1


def _skills_list(args: argparse.Namespace) -> int:
    from simjudge.skills.library import SkillLibrary

    library = SkillLibrary(args.root)
    records = library.list()
    if args.json:
        print(json.dumps([{"id": r.id, "kind": r.kind, "task": r.task, "name": r.name,
                           "metrics": r.metrics, "path": r.path} for r in records], indent=2))
        return 0
    for r in records:
        print(f"{r.id:60s} {r.kind:9s} {r.task:22s} steps={r.metrics.get('steps')}")
    print(f"{len(records)} skills in {library.root}")
    return 0


def _skills_replay(args: argparse.Namespace) -> int:
    from simjudge.skills.library import SkillLibrary

    result = SkillLibrary(args.root).replay(args.skill_id, video=args.video)
    outcome = "" if result.success is None else f", success={result.success}"
    print(f"{result.skill_id}: replayed {result.steps} steps{outcome}, largest difference to "
          f"the recorded end state {result.state_error:.2e}"
          + (f"; wrote {result.video}" if result.video else ""))
    return 0


def _csv(text: str, kind: type) -> tuple:
    return tuple(kind(part) for part in str(text).split(",") if part.strip())


def _judge_bench(args: argparse.Namespace) -> int:
    from simjudge.tasks.judge_bench import (
        DEFAULT_TASKS,
        ORACLE_TASKS,
        SECTIONS,
        JudgeBenchConfig,
        run_judge_bench,
    )
    from simjudge.tasks.spec import library_ids

    named = {"default": DEFAULT_TASKS, "oracle": ORACLE_TASKS, "all": tuple(library_ids())}
    tasks = named.get(args.tasks) or _csv(args.tasks, str)
    sections = _csv(args.sections, str)
    unknown = sorted(set(sections) - set(SECTIONS))
    if unknown:
        raise ValueError(f"unknown section(s) {unknown}; use a comma list of {list(SECTIONS)}")
    config = JudgeBenchConfig(
        judges=tuple(args.judge or ["privileged"]),
        tasks=tasks,
        pairs=args.pairs,
        neutral=args.neutral,
        seed=args.seed,
        out=args.out,
        state_noise=_csv(args.state_noise, float),
        ks=_csv(args.ks, int),
        llm=args.llm,
        llm_episodes=args.llm_episodes,
        plan_cases=args.plan_cases,
        sections=sections,
        refresh=args.refresh,
    )
    run_judge_bench(config)
    out = Path(args.out)
    print((out / "judge_bench.md").read_text())
    print(f"wrote {out / 'judge_bench.json'} and {out / 'judge_bench.md'} "
          f"(rollouts cached in {out / 'rollouts'})")
    return 0


# ----------------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for documentation and tests)."""
    parser = argparse.ArgumentParser(prog="simjudge", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    assets = sub.add_parser("assets", help="the articulated asset catalogue")
    asub = assets.add_subparsers(dest="assets_command", required=True)
    p = asub.add_parser("list", help="list assets")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=_assets_list)
    p = asub.add_parser("show", help="show an asset's articulation tree")
    p.add_argument("asset_id")
    p.set_defaults(func=_assets_show)
    p = asub.add_parser("generate", help="regenerate the procedural assets")
    p.add_argument("--out", default=None, help="output folder (default: the package's assets/)")
    p.set_defaults(func=_assets_generate)

    tasks = sub.add_parser("tasks", help="the built-in task library")
    tsub = tasks.add_subparsers(dest="tasks_command", required=True)
    p = tsub.add_parser("list", help="list built-in tasks")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_tasks_list)

    p = sub.add_parser("render", help="render a picture of a task's scene")
    p.add_argument("task", help="task id or name, e.g. OpenDrawer-v0")
    p.add_argument("--out", default="frame.png")
    p.add_argument("--camera", default=None)
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=_render)

    p = sub.add_parser("demo", help="roll out the scripted policy on a built-in task")
    p.add_argument("--task", default="OpenDrawer-v0")
    p.add_argument("--out", default="runs/demo")
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=_demo)

    p = sub.add_parser("execute", help="execute a solution: primitives, SAC for reward subtasks")
    p.add_argument("solution", help="solution YAML, or a built-in task id (reference solution)")
    p.add_argument("--out", required=True, help="run directory (verdicts, summary, video)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--budget-steps", type=int, default=None,
                   help="SAC env-step budget per reward subtask (default: 50000)")
    p.add_argument("--continue-on-failure", action="store_true",
                   help="run later subtasks after a failed one")
    p.add_argument("--reward-solver", choices=["sac", "mpc", "oracle"], default="sac",
                   help="oracle = privileged scripted policy, for testing the plumbing only")
    p.add_argument("--n-envs", type=int, default=1, help="parallel SAC envs (subprocesses)")
    p.add_argument("--no-resume", action="store_true", help="start over instead of resuming")
    p.add_argument("--no-video", action="store_true", help="do not render solution.mp4")
    p.add_argument("--skills", default=None, help="add successful subtasks to this skill library")
    p.set_defaults(func=_execute)

    skills = sub.add_parser("skills", help="the skill library on disk")
    ssub = skills.add_subparsers(dest="skills_command", required=True)
    p = ssub.add_parser("list", help="list stored skills")
    p.add_argument("--root", default=None,
                   help="library folder (default $SIMJUDGE_SKILLS_DIR or ~/.cache/simjudge/skills)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_skills_list)
    p = ssub.add_parser("replay", help="replay a skill exactly from its start state")
    p.add_argument("skill_id")
    p.add_argument("--root", default=None)
    p.add_argument("--video", default=None, help="write the replay to this mp4")
    p.set_defaults(func=_skills_replay)

    p = sub.add_parser(
        "judge-bench",
        help="benchmark judges against the privileged ground truth (pulse pairs, episode "
        "scores, perturbation contrasts, rule-verifier accuracy)",
    )
    p.add_argument("--judge", action="append", default=None,
                   help="registered judge spec, repeatable (default privileged), e.g. "
                   "noisy:sigma=0.05 or llm-episode:k=5")
    p.add_argument("--pairs", type=int, default=300, help="labelled pulse pairs (a third per bin)")
    p.add_argument("--neutral", type=int, default=60, help="neutral pulse pairs (0 = none)")
    p.add_argument("--tasks", default="default",
                   help="default, oracle (the 23 oracle-solved tasks), all, or a comma list")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="runs/judge-bench", help="output folder (rollouts cached)")
    p.add_argument("--state-noise", default="0.01", help="comma list of state-noise σ")
    p.add_argument("--ks", default="1,3,5", help="K values of test-time scaling")
    p.add_argument("--llm", default=None,
                   help="LLM client for llm-* judges, e.g. llamacpp:smollm2-135m")
    p.add_argument("--llm-episodes", type=int, default=8,
                   help="episodes scored by episode judges such as llm-episode")
    p.add_argument("--plan-cases", type=int, default=60,
                   help="injection cases judged by plan judges other than the rule judge")
    p.add_argument("--sections", default="pairs,scores,perturb,rules",
                   help="comma list of pairs, scores, perturb, rules")
    p.add_argument("--refresh", action="store_true", help="remake cached rollouts")
    p.set_defaults(func=_judge_bench)
    from simjudge.cli_loop import add_loop_commands

    add_loop_commands(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``simjudge`` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    func: Callable[[argparse.Namespace], int] = args.func
    try:
        return func(args)
    except (ValueError, LookupError, RuntimeError) as exc:
        print(f"simjudge: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
