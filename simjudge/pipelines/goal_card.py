"""The goal card: what a run is verified against, in words, and where each part came from.

``acquire``, ``execute`` and ``import-robogen`` print it before anything runs and record it
under ``goal`` in ``summary.json``: the goal's status (``written`` — given with ``--goal``,
which always wins; ``reference`` — a built-in task's; ``derived`` — read from the task's
words; ``refused`` — no goal, the run's verdict is ``unverifiable``), one line per part
with the words it was read from or the default it used (a plain verb's calibrated
threshold), the stated starts and the parts that must stay put, and, for a refusal, what
to write to make the task verifiable.

Example:
    >>> from simjudge.tasks.spec import derive_goal
    >>> card = goal_card(derive_goal("Open Door", "Open the door.", "Door-0"))
    >>> card["status"], card["parts"][0]["default"]
    ('derived', "plain 'open' of a door: ≥ 0.65 of its range (calibrated)")
    >>> print(card_text(goal_card(derive_goal("Fix", "Fix the door.", "Door-0"))).splitlines()[0])
    goal: none (unverifiable) — the words do not fix a goal
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from simjudge.tasks.spec import GoalDerivation, TaskGoal
from simjudge.tasks.spec.io import atomic_write

__all__ = ["card_text", "goal_card", "load_written_goal", "record_card"]

_PLAIN = {"open", "close", "press", "turn"}


def load_written_goal(text: str, task: str = "") -> TaskGoal:
    """A goal given with ``--goal``: a JSON / YAML file or inline JSON (the TaskGoal schema).

    Raises:
        ValueError: Neither a readable file nor valid goal JSON (the message says which).
    """
    path = Path(text)
    raw = path.read_text() if path.is_file() else text
    try:
        data = json.loads(raw)
    except json.JSONDecodeError:
        import yaml

        from simjudge.tasks.spec.bounded import load_yaml

        try:
            data = load_yaml(raw, "--goal")
        except yaml.YAMLError as exc:
            raise ValueError(f"--goal {text!r} is neither a goal file nor goal JSON ({exc})") \
                from None
    if not isinstance(data, dict):
        raise ValueError(f"--goal {text!r}: give a TaskGoal object ({{\"targets\": [...]}}), "
                         "see docs/goals.md")
    data.setdefault("task", task)
    try:
        return TaskGoal.model_validate(data)
    except ValueError as exc:
        raise ValueError(f"--goal {text!r} is not a valid goal: {exc}") from None


def _part(target: Any) -> dict[str, Any]:
    if target.kind != "joint":
        return {"describe": target.describe(), "words": "", "default": None}
    default = None
    if target.amount in _PLAIN:
        semantic = target.semantic.split(" ")[-1] or "part"
        edge = (f"≤ {target.high:.2f}" if target.direction == "close" else f"≥ {target.low:.2f}")
        default = (f"plain '{target.amount}' of a {semantic}: {edge} of its range (calibrated)")
    return {"describe": target.describe(), "words": target.words, "default": default}


def goal_card(derivation: GoalDerivation | None, written: TaskGoal | None = None,
              proposer: str | None = None) -> dict[str, Any]:
    """The card of a run's goal.

    Args:
        derivation: How the goal was derived from the task (None: nothing to derive from).
        written: A goal the user wrote (``--goal``); it wins over the derived one.
        proposer: The proposer's name; ``template`` plans from the same reading it is
            verified against, which the card says.
    """
    goal = written if written is not None else (derivation.goal if derivation else None)
    if goal is None:
        missing = list(derivation.ambiguities) if derivation is not None else []
        return {"status": "refused", "verdict": "unverifiable", "goal": None,
                "to_make_verifiable": missing + [
                    "or write the goal with --goal FILE|JSON (docs/goals.md)"]}
    status = "written" if written is not None else (
        "reference" if goal.source == "reference" else "derived")
    card: dict[str, Any] = {
        "status": status, "source": goal.source, "describe": goal.describe(),
        "parts": [_part(t) for t in goal.targets],
        "starts": [c.describe() for c in goal.starts],
        "unchanged": [u.describe() for u in goal.unchanged],
        "goal": goal.model_dump(mode="json"),
    }
    if derivation is not None and status == "derived":
        card["reasons"] = list(derivation.reasons)
    if proposer == "template" and status != "written":
        card["plan_shares_reading"] = (
            "the template proposer plans from this same reading of the words, so a misread "
            "goal would be pursued and verified alike; write the goal (--goal) or use another "
            "proposer for an independent check")
    return card


def card_text(card: dict[str, Any]) -> str:
    """The card in words, for the terminal."""
    if card["status"] == "refused":
        lines = ["goal: none (unverifiable) — the words do not fix a goal",
                 "  to make it verifiable:"]
        return "\n".join(lines + [f"    - {m}" for m in card["to_make_verifiable"]])
    origin = {"written": "written (--goal), wins over the task's words",
              "reference": "the built-in task's reference goal",
              "derived": "read from the task's words"}[card["status"]]
    lines = [f"goal ({origin}):"]
    for part in card["parts"]:
        lines.append(f"  - {part['describe']}")
        if part["words"]:
            lines.append(f"      from the words: '{part['words']}'")
        if part["default"]:
            lines.append(f"      default: {part['default']}")
    lines += [f"  - start: {s}" for s in card["starts"]]
    lines += [f"  - stays put: {u}" for u in card["unchanged"]]
    if "plan_shares_reading" in card:
        lines.append(f"  note: {card['plan_shares_reading']}")
    return "\n".join(lines)


def record_card(summary_path: str | Path, card: dict[str, Any]) -> None:
    """Add the card under ``goal`` to an existing ``summary.json`` (other keys kept)."""
    path = Path(summary_path)
    data = json.loads(path.read_text()) if path.exists() else {}
    data["goal"] = card
    atomic_write(path, json.dumps(data, indent=2, default=str) + "\n")
