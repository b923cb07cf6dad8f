"""Execute a :class:`~simjudge.tasks.spec.Solution` subtask by subtask.

The executor builds one :class:`~simjudge.envs.SimEnv` from the solution's scene
(seeded) and runs the subtasks in order, each from the previous one's end state
(:class:`~simjudge.envs.sim_state.SimState`):

- ``primitive`` subtasks are compiled with
  :func:`~simjudge.envs.codegen.compile_primitive_block` and run over the env's
  read-only view; the primitive implementations are bound to the live env by the
  executor (generated code never receives the env itself);
- ``reward`` subtasks are learned with SAC (:func:`~simjudge.skills.sac.train_sac`,
  budget in env steps) and the best policy is rolled out once, deterministically,
  from the start state to obtain the end state. ``reward_solver="oracle"`` instead
  drives the privileged :class:`~simjudge.skills.scripted.ScriptedPolicy` until the
  subtask's success holds: a stand-in for testing the executor's plumbing, never a
  result about learning.

Generated code: reward code for the oracle and MPC solvers runs in the sandbox's
subprocess mode (:data:`~simjudge.skills.subtask_runners.REWARD_CODE_MODE`; the live view is snapshotted per call), so no
reward can take the executor's process down; a primitive block runs in this process only
when the cost proof bounds it, else in the OS-bounded worker, whose primitive calls the
executor answers on the live env (``details["runs_in"]`` of the verdict says which; SAC
trains in :class:`~simjudge.skills.subtask_env.SubtaskEnv`, which compiles in-process
mode: proven code here, the rest in the worker).

A subtask's failure (compile error, runtime error, NaN reward, failed plan, SAC
below threshold) is a verdict, not an exception. The run directory layout
(:class:`~simjudge.skills.library.RunDir`) allows resuming: finished subtasks are skipped.

The per-subtask work lives in :mod:`simjudge.skills.subtask_runners`; its public names
(:func:`default_primitives`, :data:`REWARD_CODE_MODE`, ...) are re-exported here.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from contextlib import nullcontext
from functools import partial
from pathlib import Path
from typing import Any, Literal

import numpy as np

from simjudge.envs.backends import render_problem
from simjudge.envs.codegen import GeneratedCodeError
from simjudge.envs.sim_env import SimEnv
from simjudge.envs.sim_state import SimState
from simjudge.tasks.spec import (
    Outcome,
    RunDir,
    Solution,
    Subtask,
    SubtaskVerdict,
    TaskSpecError,
    load_solution,
    load_task,
)
from simjudge.tasks.spec.task import task_randomization

from .observers import JointTracker, SubtaskObserver
from .run_files import load_subtask, prepare_run, save_subtask, subtask_dir, write_results
from .subtask_runners import (
    DEFAULT_BUDGET_STEPS,
    REWARD_CODE_MODE,
    PrimitiveImpl,
    SubtaskRunner,
    default_primitives,
)

__all__ = [
    "DEFAULT_BUDGET_STEPS",
    "REFERENCE_GOAL",
    "REWARD_CODE_MODE",
    "REWARD_SOLVERS",
    "default_primitives",
    "execute_solution",
]

REWARD_SOLVERS: tuple[str, ...] = ("sac", "mpc", "oracle")
REFERENCE_GOAL: Any = object()
"""Default of ``execute_solution(goal=...)``: the reference goal of the built-in task."""


def _run_subtask(runner: SubtaskRunner, index: int, subtask: Subtask, start: SimState, run_dir: RunDir):
    where = subtask_dir(run_dir, index)
    verdict = SubtaskVerdict(
        index=index,
        name=subtask.name,
        kind=subtask.kind,
        success=False,
        solver="motion-planning" if subtask.kind == "primitive" else runner.reward_solver,
    )
    env = runner.env
    env.set_state(start)
    observer = runner.observer
    if observer is not None:
        observer.start(env, index, subtask)
    t0 = time.perf_counter()
    frames: list[np.ndarray] = []
    with env.observe_steps(observer.on_step) if observer is not None else nullcontext():
        try:
            if subtask.kind == "primitive":
                frames, _ = runner.primitive(subtask, start, verdict)
            else:
                frames, _ = runner.reward(subtask, start, verdict, where)
        except GeneratedCodeError as exc:
            verdict.success, verdict.error_type = False, type(exc).__name__
            verdict.reason = f"{subtask.kind} code failed ({type(exc).__name__}): {exc}"
        except (ValueError, LookupError) as exc:  # e.g. the oracle needs a built-in goal
            verdict.success, verdict.error_type = False, type(exc).__name__
            verdict.reason = f"{type(exc).__name__}: {exc}"
    verdict.wall_time_s = time.perf_counter() - t0
    end = env.get_state()
    if observer is not None:
        where.mkdir(parents=True, exist_ok=True)
        verdict.details["judges"] = observer.finish(where)
    if runner.tracker is not None:
        runner.tracker.on_step()
        verdict.details["max_joints"] = {k: dict(v) for k, v in runner.tracker.maximum.items()}
    if runner.video and not frames:
        frames = [env.render()]
    save_subtask(run_dir, verdict, start, end, frames, env.metadata["render_fps"])
    return verdict, end


def execute_solution(
    solution: Solution | str | Path,
    out_dir: str | Path,
    *,
    seed: int = 0,
    budget_steps: int | None = None,
    continue_on_failure: bool = False,
    reward_solver: Literal["sac", "mpc", "oracle"] = "sac",
    primitives: Mapping[str, PrimitiveImpl] | None = None,
    sac_config: Any = None,
    resume: bool = True,
    video: bool = True,
    skills: Any = None,
    goal: Any = REFERENCE_GOAL,
    observer: SubtaskObserver | None = None,
    run_config: Mapping[str, Any] | None = None,
    randomize: bool = True,
) -> Outcome:
    """Execute a solution and write its verdicts, summary and video to ``out_dir``.

    The task is **verified independently** of the solution: ``goal`` (the task's own goal,
    never the proposal's success code) is checked at the start, where it must not hold yet
    (else nothing runs and the outcome is ``trivial_start``), and over the executed states:
    one evaluator of the goal sees the reset state, then every subtask's end state in order
    (resumed subtasks: their saved end states), and the goal facts are its facts after the
    last one. A memoryless goal (joint, place, all) is thus judged on the final state; a
    ``sequence`` goal counts its stages only in order, so a final state that undoes an
    earlier stage (the drawer closed again) still verifies, and stages done in the wrong
    order do not. ``summary.json`` lists the checked states (``goal_checks``). The outcome
    keeps ``claimed_success`` (every subtask's own success code held) apart from
    ``verified_success``; only verified success makes ``task_success``.

    Args:
        solution: A :class:`Solution`, or a YAML path / text.
        out_dir: Run directory (see :mod:`simjudge.skills.run_files` for its files).
        seed: Scene seed and the seed of planners and SAC.
        budget_steps: SAC env-step budget per reward subtask; default: the subtask's
            ``budget_steps``, else :data:`DEFAULT_BUDGET_STEPS`.
        continue_on_failure: Run later subtasks after a failed one (from its end state).
        reward_solver: ``"sac"`` (default), ``"mpc"`` (sampling MPC on the generated
            reward with the simulator as its model; fast, used for datasets and demos) or
            ``"oracle"`` (privileged scripted policy; for testing the plumbing only).
        primitives: Name -> ``impl(env, *args)``; default :func:`default_primitives`.
        sac_config: A :class:`~simjudge.skills.sac.SACConfig` (``total_steps`` and
            ``seed`` are set per subtask).
        resume: Skip subtasks whose verdict and end state are already in ``out_dir``.
        video: Render frames and write ``solution.mp4`` (skipped, with the reason under
            ``video_skipped`` in ``summary.json``, where the backend cannot render here:
            :func:`simjudge.envs.backends.render_problem`).
        skills: A :class:`~simjudge.skills.library.SkillLibrary` to add each
            successful subtask to (planned or learned; not oracle-solved ones), or None.
        goal: The task's independent goal as an env goal (``evaluate``/``progress``, e.g.
            ``TaskGoal.env_goal()``); by default the reference goal of a built-in task of
            that name; None: no goal (the outcome is ``unverifiable`` and never a success).
        observer: Live judges for every subtask (e.g.
            :class:`simjudge.judges.live.LiveSubtaskJudges`), or None.
        run_config: The calling command's full config (e.g. ``simjudge execute``'s),
            recorded in ``config.json`` and ``summary.json`` with the executor's own keys.
        randomize: Vary the world per seed as the built-in task's env does (when the
            solution's scene is the task's); False = the fixed start (``--no-randomize``).

    Raises:
        ValueError: Unknown ``reward_solver``, or ``out_dir`` holds a run of another
            solution, seed or solver (use a new folder or ``resume=False``).
    """
    if reward_solver not in REWARD_SOLVERS:
        raise ValueError(
            f"reward_solver must be one of {list(REWARD_SOLVERS)}, got {reward_solver!r}"
        )
    if isinstance(solution, str | Path):
        solution = load_solution(solution)
    t0 = time.perf_counter()
    run_dir = RunDir(out_dir)
    config = {
        **(run_config or {}),
        "seed": seed,
        "reward_solver": reward_solver,
        "budget_steps": budget_steps,
        "continue_on_failure": continue_on_failure,
        "randomize": randomize,
    }
    prepare_run(run_dir, solution, config, resume)
    video_skipped = render_problem() if video else None
    video = video and video_skipped is None  # a backend that cannot render here: no video
    if goal is REFERENCE_GOAL:
        goal = _task_goal(solution.task)
    env = SimEnv(
        solution.scene,
        goal=goal,
        render_mode="rgb_array" if video else None,
        scene_seed=seed,
        task_name=solution.task,
        randomization=task_randomization(solution.task, solution.scene) if randomize else None,
    )
    try:
        env.reset(seed=seed)
        tracker = JointTracker(env)
        start_facts = _plain_facts(env.evaluate()) if goal is not None else {}
        checks: list[tuple[str, SimState]] = [("reset", env.get_state())]
        verdicts: list[SubtaskVerdict] = []
        if not start_facts.get("success"):
            runner = SubtaskRunner(
                solution, env, seed, primitives, reward_solver, budget_steps, sac_config, video
            )
            runner.observer, runner.tracker = observer, tracker
            with env.observe_steps(tracker.on_step):
                verdicts, ends = _run_all(runner, run_dir, resume, continue_on_failure, skills)
            checks += [(f"end of subtask {v.index} ({v.name})", end)
                       for v, end in zip(verdicts, ends, strict=True)]
        goal_facts, goal_checks = _verify_in_order(env, goal, checks)
        joints = tracker.record()
        for v in verdicts:  # resumed subtasks ran in an earlier call: fold in their maxima
            _fold_max(joints["max_joints"], v.details.get("max_joints", {}))
    finally:
        env.close()
    outcome = _outcome(solution, verdicts, goal is not None, start_facts, goal_facts)
    outcome.wall_time_s = time.perf_counter() - t0
    outcome.out_dir = str(run_dir.root)
    for key, value in joints.items():
        setattr(outcome, key, value)
    write_results(run_dir, outcome, config, video, env.metadata["render_fps"])
    summary = run_dir.read_json("summary.json")
    run_dir.write_json("summary.json", {**summary, "goal_checks": goal_checks, "video_skipped": video_skipped})
    return outcome


def _verify_in_order(
    env: SimEnv, goal: Any, checks: Sequence[tuple[str, SimState]]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Feed the states, in order, to one evaluator of ``goal``: its last facts, and a record.

    One evaluator sees every state (a ``sequence`` goal counts its stages only in their
    turn); the env restores each state first (its own evaluator forgets on ``set_state``,
    this one does not). The env is left on the last state.
    """
    env.set_state(checks[-1][1])
    if goal is None:
        return {}, []
    bind = getattr(goal, "bind", None)  # duck-typed goals may only evaluate (memoryless)
    evaluate = bind(env.view) if bind is not None else partial(goal.evaluate, env.view)
    facts: dict[str, Any] = {}
    record: list[dict[str, Any]] = []
    for label, state in checks:
        env.set_state(state)
        facts = _plain_facts(evaluate())
        entry = {"state": label, "success": bool(facts.get("success"))}
        if "stages_done" in facts:
            entry["stages_done"] = int(facts["stages_done"])
        record.append(entry)
    return facts, record


def _outcome(
    solution: Solution,
    verdicts: list[SubtaskVerdict],
    has_goal: bool,
    start_facts: dict[str, Any],
    goal_facts: dict[str, Any],
) -> Outcome:
    """Claimed vs verified success and the verdict that explains them."""
    ok = [v.success for v in verdicts]
    claimed = len(ok) == len(solution.subtasks) and all(ok)
    verified = bool(goal_facts.get("success")) if has_goal else None
    failed = [v for v in verdicts if not v.success]
    if start_facts.get("success"):
        verdict = "trivial_start"
        reason = ("trivial_start: the task goal already holds at reset, so this scene cannot "
                  "show the task being done; start from a state where it does not hold "
                  f"(goal facts at reset: {start_facts})")
    elif not has_goal:
        verdict = "unverifiable"
        reason = ("unverifiable: the task has no independent goal to check, so its claimed "
                  "success does not count; give the task a goal")
    elif verified:
        verdict = "verified" if claimed else "verified_despite_subtasks"
        reason = ("success: the task goal holds, checked in order over the reset state and "
                  f"{len(verdicts)} subtask end states")
    elif claimed:
        verdict = "claimed_not_verified"
        reason = ("claimed but not verified: every subtask's own success held, but the task "
                  "goal does not hold, checked in order over the reset state and "
                  f"{len(verdicts)} subtask end states (final facts: {goal_facts})")
    else:
        verdict = "failed"
        first = failed[0]
        reason = f"subtask {first.index} ({first.name}) failed: {first.reason}"
    return Outcome(
        subtask_success=tuple(ok),
        task_success=bool(verified) and not start_facts.get("success"),
        claimed_success=claimed,
        verified_success=verified,
        verdict=verdict,
        reason=reason,
        task=solution.task,
        goal_facts=goal_facts,
        verdicts=verdicts,
        env_steps=sum(v.steps for v in verdicts),
    )


def _fold_max(into: dict[str, dict[str, float]], other: Mapping[str, Any]) -> None:
    for key, reading in other.items():
        if key in into and reading["fraction"] > into[key]["fraction"]:
            into[key] = dict(reading)


def _run_all(
    runner: SubtaskRunner, run_dir: RunDir, resume: bool, go_on: bool, skills: Any
) -> tuple[list[SubtaskVerdict], list[SimState]]:
    """Run (or resume) the subtasks in order: their verdicts and end states."""
    state = runner.env.get_state()
    verdicts: list[SubtaskVerdict] = []
    ends: list[SimState] = []
    fresh = False  # once a subtask runs, later ones must run too (their start changed)
    from tqdm import tqdm

    subtasks = runner.solution.subtasks
    bar = tqdm(total=len(subtasks), desc="subtasks", unit="subtask", leave=False, disable=None)
    for index, subtask in enumerate(subtasks):
        bar.set_postfix_str(f"{subtask.kind}: {subtask.name}"[:60])
        done = load_subtask(run_dir, index) if resume and not fresh else None
        if done is not None:
            verdict, state = done
        else:
            fresh = True
            verdict, state = _run_subtask(runner, index, subtask, state, run_dir)
            if skills is not None and verdict.success and verdict.solver != "oracle":
                skills.add_from_run(run_dir, index, runner.solution, runner.seed)
        verdicts.append(verdict)
        ends.append(state)
        bar.update(1)
        if not verdict.success and not go_on:
            break
    bar.close()
    return verdicts, ends


def _task_goal(task: str) -> Any:
    try:
        return load_task(task).goal
    except TaskSpecError:
        return None


def _plain_facts(facts: Mapping[str, Any]) -> dict[str, Any]:
    return {k: (v.item() if isinstance(v, np.generic) else v) for k, v in facts.items()}
