"""Playing one arena match: both policies from the same scene seed and state snapshot.

:func:`play_match` is the executor's job function (module level, picklable arguments):
it builds the task's env once, resets it with the match's seed, takes a snapshot of the
settled initial state, and runs policy A then policy B from that exact snapshot (both
policies are also reset with the same seed). The evaluator (:mod:`.evaluator`) then sees
only the two sides' signals — Φ traces and success — and returns the verdict.

Every rollout goes through :class:`~simjudge.judges.JudgeRecord` (the evaluator's judge, or
the privileged judge for the ``oracle`` evaluator); with ``episodes_dir`` each side's episode
is written in its format (``<episodes_dir>/<handle>/episode_000000.json``, named by the
opaque handle), so any judge can re-score the match later.

Example:
    >>> out = play_match("OpenDrawer-v0", 3, "oracle", "zero", evaluator="oracle")
    >>> out["preference"], out["progress_a"], out["progress_b"] < 5
    ('A', 100.0, True)
"""

from __future__ import annotations

import time
from collections import OrderedDict
from pathlib import Path
from typing import Any

from simjudge.envs.errors import SimjudgeError

from .evaluator import SideSignals, TieRule, judge_match

__all__ = ["EVALUATORS", "ArenaEvaluatorError", "check_evaluator", "evaluator_judge",
           "judged_by_judge", "play_match", "play_side", "task_env"]

EVALUATORS = ("oracle", "judge:SPEC", "panel:SPEC+SPEC[+...]")
"""Evaluator specs: the simulator's verified success and privileged Φ, any registered judge,
or a panel of judges (equal weights, majority vote)."""


class ArenaEvaluatorError(SimjudgeError, ValueError):
    """An evaluator spec simjudge cannot build; the message lists the valid forms."""


def evaluator_judge(spec: str) -> Any:
    """The judge behind an evaluator spec.

    For ``oracle`` it is the privileged judge: its record is kept for re-scoring, while the
    signals come from the simulator.

    Raises:
        ArenaEvaluatorError: Not one of the forms of :data:`EVALUATORS`, or a judge spec the
            registry cannot build.
    """
    from simjudge.judges import JudgePanel, make_judge

    kind, _, rest = spec.partition(":")
    try:
        if spec == "oracle":
            return make_judge("privileged")
        if kind == "judge" and rest:
            return make_judge(rest)
        if kind == "panel" and rest:
            return JudgePanel([make_judge(part) for part in rest.split("+")])
    except (ValueError, LookupError, TypeError) as exc:
        raise ArenaEvaluatorError(f"evaluator {spec!r}: {exc}") from exc
    raise ArenaEvaluatorError(
        f"unknown evaluator {spec!r}; use 'oracle' (verified success and privileged progress), "
        "'judge:SPEC' (e.g. judge:privileged, judge:noisy:sigma=0.1) or 'panel:SPEC+SPEC' "
        "(e.g. panel:noisy:sigma=0.1+quantized:levels=4)")


def check_evaluator(spec: str) -> str:
    """Validate an evaluator spec early (before any match runs); return it.

    Raises:
        ArenaEvaluatorError: See :func:`evaluator_judge`.
    """
    evaluator_judge(spec)
    return spec


def check_preference(spec: str | None) -> Any:
    """The preference judge of a ``prefer`` spec (None for the tie rule), built and checked.

    The arena hands it the two sides' Φ traces, so it must be a pairwise judge in Φ mode
    (``preference``, ``preference:statistic=area,margin=0.1``), not one that needs frames.

    Raises:
        ArenaEvaluatorError: The registry cannot build it, it has no ``judge_pair``, or it
            would ask a VLM (which needs frames the arena does not render).
    """
    if spec is None:
        return None
    from simjudge.judges import make_judge

    try:
        judge = make_judge(spec)
    except (ValueError, LookupError, TypeError) as exc:
        raise ArenaEvaluatorError(f"prefer {spec!r}: {exc}") from exc
    if not callable(getattr(judge, "judge_pair", None)):
        raise ArenaEvaluatorError(
            f"prefer {spec!r} is not a pairwise judge (no judge_pair); use 'preference' or "
            "'preference:statistic=area|final|max,margin=M'")
    if getattr(judge, "mode", "phi") != "phi":
        raise ArenaEvaluatorError(
            f"prefer {spec!r} asks a VLM, which needs frames the arena does not render; use "
            "the Φ-trace form ('preference' without a server)")
    return judge


def judged_by_judge(spec: str) -> bool:
    """Whether the evaluator's signals come from a judge (else from the simulator)."""
    return spec != "oracle"


_ENVS: OrderedDict[tuple[str, int | None, str, bool], Any] = OrderedDict()
MAX_CACHED_ENVS = 8


def task_env(task: str, horizon: int | None, evaluator: str, randomize: bool = True) -> Any:
    """The task's env on a :class:`JudgeRecord` of the evaluator's judge, cached per process.

    Building an env costs far more than a match, so a worker keeps its last
    :data:`MAX_CACHED_ENVS` envs; every match starts with ``reset(seed)`` and a snapshot, so
    reuse cannot leak state from one match into the next. The ``oracle`` evaluator reads
    the env itself; its record (privileged judge) is kept for re-scoring.
    """
    from simjudge.judges import JudgeRecord
    from simjudge.tasks.spec import make_task_env

    key = (task, horizon, evaluator, randomize)
    env = _ENVS.get(key)
    if env is None:
        if len(_ENVS) >= MAX_CACHED_ENVS:
            _ENVS.popitem(last=False)[1].close()
        kwargs: dict[str, Any] = {"horizon": horizon} if horizon else {}
        if not randomize:
            kwargs["randomization"] = None
        env = JudgeRecord(make_task_env(task, **kwargs),
                          evaluator_judge(evaluator))
        _ENVS[key] = env
    _ENVS.move_to_end(key)
    return env


def play_side(env: Any, spec: str, seed: int, snapshot: Any, judged: bool,
              episodes_dir: Path | None, handle: str) -> tuple[SideSignals, dict[str, Any]]:
    """Run one side from ``snapshot`` on a :class:`JudgeRecord`-wrapped env; its signals.

    ``judged``: signals from the judge (Φ, success verdict), else from the simulator
    (privileged Φ, verified success). Returns the signals and the policy/env timing.
    """
    from simjudge.policies import make_policy, run_episode

    policy = make_policy(spec)
    try:
        result = run_episode(env, policy, seed, options={"state": snapshot})
    finally:
        policy.close()
    timing = result.timing()
    record = env.last_record
    if episodes_dir is not None and record is not None:
        record.save(episodes_dir / handle / "episode_000000.json")
    if not judged:  # the simulator's verified success and privileged Φ
        success = [bool(s.env_success) for s in record.steps] if record else []
        first = next((k for k, ok in enumerate(success) if ok), None)
        if first is None and result.success:
            first = len(result.progress) - 1
        return SideSignals(result.progress, bool(result.success), first), timing
    assert record is not None, "JudgeRecord keeps the finished episode"
    progress = [float(s.signal.phi) if s.signal.phi is not None else 0.0 for s in record.steps]
    first = next((k for k, s in enumerate(record.steps) if s.signal.verdict == "success"), None)
    return SideSignals(progress, first is not None, first), timing


def play_match(task: str, seed: int, spec_a: str, spec_b: str, *, evaluator: str = "oracle",
               handle_a: str = "A", handle_b: str = "B", margin: float = 10.0,
               speed_margin: float = 0.2, horizon: int | None = None,
               episodes_dir: str | None = None, prefer: str | None = None,
               epsilon: float = 0.01, randomize: bool = True) -> dict[str, Any]:
    """Play one match and judge it.

    Args:
        task: Task id.
        seed: Scene seed (and policy seed) of both sides.
        spec_a: Policy spec at A (:func:`simjudge.policies.make_policy`).
        spec_b: Policy spec at B.
        evaluator: ``oracle``, ``judge:SPEC`` or ``panel:SPEC+SPEC``.
        handle_a: A's opaque handle (names its episode folder).
        handle_b: B's opaque handle.
        margin: Tie rule: progress points that count.
        speed_margin: Tie rule: relative step saving that counts.
        horizon: Episode length (default: the task's).
        episodes_dir: Write each side's episode record under this folder.
        prefer: Preference judge spec (``preference``) deciding from the two Φ traces
            instead of the tie rule (:func:`~.evaluator.judge_match`).
        epsilon: Stagnation threshold ε of the OPD metrics reported per side.
        randomize: The task's world for ``seed`` (False: the fixed start).

    Returns:
        ``progress_a``, ``progress_b``, ``preference``, ``reason``, ``rule``, ``details``
        (signals, OPD metrics and timing per side) and ``evaluator``.
    """
    check_evaluator(evaluator)
    judged = judged_by_judge(evaluator)
    env = task_env(task, horizon, evaluator, randomize)
    out_dir = Path(episodes_dir) if episodes_dir else None
    started = time.perf_counter()
    env.reset(seed=seed)
    snapshot = env.unwrapped.get_state()
    a, timing_a = play_side(env, spec_a, seed, snapshot, judged, out_dir, handle_a)
    b, timing_b = play_side(env, spec_b, seed, snapshot, judged, out_dir, handle_b)
    verdict = judge_match(a, b, TieRule(margin, speed_margin, epsilon), prefer=check_preference(prefer))
    details = dict(verdict.details)
    details["A"] = {**details["A"], "timing": timing_a}
    details["B"] = {**details["B"], "timing": timing_b}
    details["seconds"] = round(time.perf_counter() - started, 3)
    details["world"] = env.unwrapped.world_sample
    return {"evaluator": evaluator, "progress_a": verdict.progress_a,
            "progress_b": verdict.progress_b, "preference": verdict.preference,
            "reason": verdict.reason, "rule": verdict.rule, "details": details}
