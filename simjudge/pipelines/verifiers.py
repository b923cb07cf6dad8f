"""Pre-execution verifiers that rank candidate solutions for the acquisition loop.

Each verifier is a score function ``(request, solution) -> (score, details)``;
higher is better. ``rule``: the mean rule-judge score (1 / 0.5 / 0) over the
solution's subtasks, checked against the object's articulation tree (exact,
static, no model). ``prm``: the trained process verifier's aggregated score.
``llm``: the VERGSA LLM-as-a-judge ternary score, averaged over subtasks.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from simjudge.judges.context import JudgeContext
from simjudge.judges.goal_check import goal_issues, goal_score
from simjudge.judges.rule import rule_issues
from simjudge.tasks.spec import Solution

from .proposer import TaskRequest

__all__ = ["judge_context", "make_verifier", "prm_score_fn", "rule_score"]


def judge_context(request: TaskRequest, solution: Solution | None = None) -> JudgeContext:
    """What a plan judge may know: task text, scene, the object's names and tree."""
    name = request.object_name
    tree = request.tree
    links = {name: tuple(tree.link_names)} if tree else {name: ("base",)}
    joints = {name: tuple(j.name for j in tree.movable_joints)} if tree else {name: ()}
    objects = [name]
    if solution is not None:
        objects += [o.name for o in solution.scene.objects if o.name != name]
    return JudgeContext(
        task=request.description,
        task_name=request.name,
        scene=solution.scene.to_dict() if solution is not None else {},
        articulation={name: tree.to_text()} if tree else {},
        object_names=tuple(objects),
        links=links,
        joints=joints,
    )


def request_goal(request: TaskRequest) -> Any:
    """The env goal a request is judged by (its task goal: a built-in's reference, else derived)."""
    goal = request.goal
    return None if goal is None else goal.env_goal()


def rule_score(request: TaskRequest, solution: Solution) -> tuple[float, dict[str, Any]]:
    """Rule-judge score of a candidate: per-subtask rules and the goal check, averaged.

    The per-subtask score is the mean rule-judge score over subtasks (1 = no issue, 0.5 =
    warnings, 0 = errors); the goal check (:func:`~simjudge.judges.goal_check.goal_issues`)
    scores whether the candidate's own success conditions are as strong as the task goal.
    With a goal the score is the mean of the two, so a candidate that would claim success
    without reaching the goal ranks below one that would not.
    """
    context = judge_context(request, solution)
    per_subtask: list[dict[str, Any]] = []
    for subtask in solution.subtasks:
        issues = rule_issues(subtask.kind, subtask.code, context)
        errors = [str(i) for i in issues if i.severity == "error"]
        warnings = [str(i) for i in issues if i.severity != "error"]
        score = 0.0 if errors else (0.5 if warnings else 1.0)
        per_subtask.append({"subtask": subtask.name, "score": score,
                            "errors": errors[:3], "warnings": warnings[:3]})
    mean = sum(s["score"] for s in per_subtask) / len(per_subtask)
    goal = request_goal(request)
    if goal is None:
        return mean, {"subtasks": per_subtask}
    issues = goal_issues([(s.kind, s.code) for s in solution.subtasks], goal, context)
    return (mean + goal_score(issues)) / 2, {
        "subtasks": per_subtask, "goal_score": goal_score(issues),
        "goal_issues": [str(i) for i in issues]}


def prm_score_fn(folder: str | Path, strategy: str = "last", embedder: Any = None):
    """A score function from a PRM saved by ``simjudge prm train``."""
    from simjudge.judges.prm import PRMVerifier, scene_text
    from simjudge.llm import MiniLMEmbedder

    from .prm_eval import rule_features

    embedder = embedder or MiniLMEmbedder()
    folder = Path(folder)
    meta = (folder / "prm.json").read_text() if (folder / "prm.json").exists() else None
    if meta is None:
        raise FileNotFoundError(
            f"no trained PRM in {folder}; train one with `simjudge prm train --data DATA --out "
            f"{folder}`"
        )
    uses_rule = '"uses_rule": true' in meta
    verifier = PRMVerifier.load(folder, embedder.embed, rule_features if uses_rule else None)

    def score(request: TaskRequest, solution: Solution) -> tuple[float, dict[str, Any]]:
        text = f"{request.name}: {request.description} (object {request.asset})"
        subtasks = [(s.name, s.kind, s.code) for s in solution.subtasks]
        scene = scene_text(solution.scene.model_dump(mode="json", exclude_none=True))
        value, prefix_scores = verifier.score_solution(text, subtasks, strategy, request.asset,
                                                       scene)
        return value, {"prefix_scores": prefix_scores, "strategy": strategy}

    return score


def make_verifier(name: str, prm_path: str | Path | None = None, strategy: str = "last",
                  llm_client: Any = None):
    """The score function for a verifier name (``none`` gives None: proposal order)."""
    if name == "none":
        return None
    if name == "rule":
        return rule_score
    if name == "prm":
        if prm_path is None:
            raise ValueError("--verifier prm needs --prm DIR (a PRM from `simjudge prm train`)")
        return prm_score_fn(prm_path, strategy)
    if name == "llm":
        from simjudge.judges.llm import LLMPlanJudge

        if llm_client is None:
            raise ValueError("--verifier llm needs an LLM client (--judge-llm SPEC)")
        judge = LLMPlanJudge(llm_client)

        def score(request: TaskRequest, solution: Solution) -> tuple[float, dict[str, Any]]:
            context = judge_context(request, solution)
            signals = [judge.judge_plan(s.kind, s.code, context) for s in solution.subtasks]
            values = [float(sig.reward) for sig in signals]
            return sum(values) / len(values), {"subtasks": [sig.reason for sig in signals]}

        return score
    raise ValueError(f"unknown verifier {name!r}; use one of none, rule, prm, llm")
