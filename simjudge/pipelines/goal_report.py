"""``simjudge goal``: derive a task's goal and say why.

Prints the goal a task is judged by — for a built-in task its reference goal and the
parser's own reading of its name and description (and whether they agree), for a new task
the parser's goal — with the reasons (words, tree facts, positions) and any ambiguity. The
exit code is 1 when no goal can be derived without guessing, 0 otherwise.

Example:
    >>> goal_command(GoalConfig(task="Turn Safe Dial", object="Safe-0",
    ...                         description="Turn the dial a quarter turn."))  # doctest: +ELLIPSIS
    Turn Safe Dial on Safe-0 (Safe) — goal from the parser:
      Safe joint_1 (free knob link_1; grasp link_1) must end between 0.15 and 0.35 ...
    <BLANKLINE>
    why:
      - 'dial' is link_1 (joint_1, free knob, ...)
      - joint_1: open ('turn the dial a quarter turn'), amount 'a quarter turn' -> [0.15, 0.35]
    0
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from simjudge.tasks.spec import (
    GoalDerivation,
    TaskGoal,
    TaskSpec,
    TaskSpecError,
    derive_goal,
    evaluate_probe,
    goal_for_spec,
    load_probes,
    load_task,
    object_parts,
)
from simjudge.tasks.spec.config import option

__all__ = ["GoalConfig", "evaluations", "goal_command", "goal_report"]


@dataclass(frozen=True, kw_only=True)
class GoalConfig:
    """Derive a task's goal (what its final state is judged by) and explain why.

    Attributes:
        task: Task name or built-in id, e.g. "Nudge Drawer Halfway Shut" or ``OpenDrawer-v0``.
        object: Catalogue asset id or category of the main object, e.g.
            ``StorageFurniture-0`` (required for a task that is not built in).
        description: Task description (default: the built-in task's, else the name).
        json: Print the derivation as JSON.
        evaluate: A JSON file with a list of probe states ``{"initial": {...}, "final":
            {...}, "max": {...}}`` (the asset's joint names -> fractions of the joint's
            range) to evaluate the derived goal on: one ``{"holds", "start_ok"}`` each.
        goal_reader: ``rule`` (the rule reader), ``llm`` (an LLM writes the goal; K samples
            must agree) or ``both`` (a goal only when the two agree, else refused with both
            readings); a built-in task's reference goal always wins.
        llm: The LLM of ``--goal-reader llm|both`` (``llamacpp:qwen2.5-coder-1.5b``,
            ``openai:MODEL``; none: ``$SIMJUDGE_LLM`` or the embedded default).
        goal_samples: Samples K of the LLM reader (a strict majority must agree).
    """

    task: str = option(positional=True)
    object: str | None = None
    description: str | None = None
    json: bool = False
    evaluate: str | None = None
    goal_reader: Literal["rule", "llm", "both"] = "rule"
    llm: str | None = None
    goal_samples: int = 3


def _builtin(config: GoalConfig) -> TaskSpec | None:
    """The built-in task the config names, when it adds no other object or description."""
    try:
        spec = load_task(config.task)
    except TaskSpecError:
        return None
    same_object = config.object in (None, spec.asset, spec.asset.split("-")[0])
    same_text = config.description in (None, spec.description)
    return spec if same_object and same_text else None


def goal_report(config: GoalConfig) -> dict[str, Any]:
    """The goal of the task the config names, as a JSON-ready dict.

    Keys: ``task``, ``object``, ``description``, ``goal`` (a :class:`TaskGoal` dump or
    None), ``describe`` (its text), ``source``, ``reasons``, ``ambiguities`` and, for a
    built-in task, ``parser`` (the parser's own derivation) and ``parser_agrees``.

    Raises:
        TaskSpecError: A new task without ``object``.
    """
    spec = _builtin(config)
    if spec is not None:
        parsed = goal_for_spec(spec)
        goal: TaskGoal | None = TaskGoal.from_reference(spec) if spec.goal is not None else None
        derivation = GoalDerivation(goal, [f"the reference goal of {spec.env_id}"], [])
        report = _report(spec.name, spec.asset, spec.description, derivation)
        report["parser"] = parsed.to_dict()
        report["parser_agrees"] = _agrees(goal, parsed.goal)
        return _with_evaluations(report, config, spec.asset)
    if config.object is None:
        raise TaskSpecError(
            f"{config.task!r} is not a built-in task (or comes with its own description); "
            "give the object with --object ASSET (see `simjudge assets list`)"
        )
    description = config.description or ""
    if config.goal_reader == "rule":
        derivation = derive_goal(config.task, description, config.object)
    else:
        from simjudge.llm import make_client

        from .goal_llm import LLMGoalReader, read_goal

        reader = LLMGoalReader(make_client(config.llm), k=config.goal_samples)
        derivation = read_goal(config.goal_reader, config.task, description, config.object,
                               llm=reader)
    report = _report(config.task, config.object, description or config.task, derivation)
    return _with_evaluations(report, config, config.object)


def evaluations(goal: TaskGoal, probes: list[dict[str, Any]], asset: str) -> list[dict[str, bool]]:
    """``[{"holds", "start_ok"}]`` of a goal on each probe state (joint names of ``asset``).

    Raises:
        ProbeError: A probe is malformed or names a joint the asset does not have.
    """
    joints = [p.joint for p in object_parts(asset)]
    return [evaluate_probe(goal, probe, joints) for probe in probes]


def _with_evaluations(report: dict[str, Any], config: GoalConfig, asset: str) -> dict[str, Any]:
    """The report with ``evaluations`` on the ``--evaluate`` probes (when derived)."""
    if config.evaluate is None:
        return report
    probes = load_probes(config.evaluate)
    goal = TaskGoal.model_validate(report["goal"]) if report["goal"] is not None else None
    report["evaluations"] = [] if goal is None else evaluations(goal, probes, asset)
    return report


def _report(task: str, asset: str, description: str, d: GoalDerivation) -> dict[str, Any]:
    refused = "; ".join(d.ambiguities) or "no goal derived"
    return {"task": task, "object": asset, "description": description,
            "status": "derived" if d.goal else "refused",
            "reason": "; ".join(d.reasons) if d.goal else refused,
            "source": d.goal.source if d.goal else None,
            "describe": d.goal.describe() if d.goal else None, **d.to_dict()}


def _agrees(reference: TaskGoal | None, parsed: TaskGoal | None) -> bool:
    """Whether the parsed goal agrees with the reference goal.

    Same targets (object, joint / placement, direction) and each reference threshold inside
    the parser's interval, or the parser's reading at least as strict (a plain "open" at
    the calibrated 0.65-0.9 where the reference asks 0.35-0.6).
    """
    if reference is None or parsed is None or len(reference.targets) != len(parsed.targets):
        return False
    for ref, got in zip(reference.targets, parsed.targets, strict=True):
        if ref.kind != got.kind or ref.key != got.key:
            return False
        if ref.kind == "joint" and got.kind == "joint":  # the kinds are equal (checked above)
            edge = ref.low if ref.direction == "open" else ref.high
            stricter = (got.low >= edge and got.high >= 1.0 if ref.direction == "open"
                        else got.high <= edge and got.low <= 0.0)
            if ref.direction != got.direction or not (got.low <= edge <= got.high or stricter):
                return False
        elif ref.kind == "place" and got.kind == "place" and ref.relation != got.relation:
            return False
    return True


def _print(report: dict[str, Any]) -> None:
    source = {"reference": "the built-in task's reference goal", "parser": "the parser",
              "llm": "the LLM goal writer", None: ""}[report["source"]]
    from simjudge.envs.catalogue import default_catalogue

    category = report["object"].split("-")[0]
    if report["object"] in default_catalogue():
        category = default_catalogue().get(report["object"]).category
    header = f"goal from {source}" if report["goal"] is not None else "no goal derived"
    print(f"{report['task']} on {report['object']} ({category}) — {header}:")
    if report["describe"]:
        print("  " + report["describe"].replace("\n", "\n  "))
    if report["reasons"]:
        print("\nwhy:")
        print("\n".join(f"  - {r}" for r in report["reasons"]))
    if report["ambiguities"]:
        print("\nambiguous (no goal is guessed):")
        print("\n".join(f"  - {a}" for a in report["ambiguities"]))
    parser = report.get("parser")
    if parser is not None:
        agree = "agrees with" if report["parser_agrees"] else "DISAGREES with"
        print(f"\nthe parser's reading of the name and description {agree} the reference goal")
        for t in (parser["goal"] or {}).get("targets", []):
            what = (f"{t['object']} {t['joint']} [{t['low']:.2f}, {t['high']:.2f}] "
                    f"{t['direction']}" if t["kind"] == "joint"
                    else f"{t['object']} {t['relation']} {t['target']}")
            print(f"  - {what}")
        for a in parser["ambiguities"]:
            print(f"  - ambiguous: {a}")


def goal_command(config: GoalConfig) -> int:
    """Handler of ``simjudge goal``: print the derived goal and why.

    Returns:
        0 when a goal was derived, 1 when none can be (the ambiguities say what to add).

    Raises:
        TaskSpecError: A new task without ``object``.
    """
    report = goal_report(config)
    if config.json:
        print(json.dumps(report, indent=2))
    else:
        _print(report)
    return 0 if report["goal"] is not None else 1
