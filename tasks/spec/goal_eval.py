"""Evaluate a task goal on an episode summarised by joint state (range fractions).

One meaning for every part of a :class:`~simjudge.tasks.spec.goal.TaskGoal`, used by the
goal's own :meth:`~simjudge.tasks.spec.goal.TaskGoal.check` on a live scene and by
``simjudge goal --evaluate`` and ``bench/goal_reading.py`` on probe states:

- a joint target holds when its end position (a spring joint: the episode's largest
  fraction, as a press springs back) is inside its interval — a relative target's interval
  is the change from the start — and, for a two-step target, the largest fraction reached
  ``reached`` first;
- an unchanged part holds when it ended within its tolerance of its start (a spring joint:
  was never pressed);
- ``start_ok``: every stated start holds on the initial state, the targets do not all
  hold already there (the task would be done before it starts), and no target's end lies
  behind the start (closing to 0.25 from 0.1).

A probe is ``{"initial": {joint: f}, "final": {...}, "max": {...}}``: a joint not in
``initial`` is at 0.0, a joint not in ``final`` keeps its initial value, ``max`` defaults to
the larger of the two.

Example:
    >>> from simjudge.tasks.spec.goal import JointTarget, TaskGoal
    >>> goal = TaskGoal(targets=[JointTarget(object="Door", joint="joint_0", part="link_0",
    ...                                      link="link_0", low=0.9, high=1.0)])
    >>> evaluate_probe(goal, {"initial": {}, "final": {"joint_0": 1.0}})
    {'holds': True, 'start_ok': True}
    >>> evaluate_probe(goal, {"initial": {"joint_0": 1.0}})
    {'holds': True, 'start_ok': False}
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from simjudge.envs.errors import SimjudgeError
from simjudge.envs.success import TARGET_TOLERANCE, JointChange, in_interval

if TYPE_CHECKING:
    from .goal import JointTarget, TaskGoal

__all__ = ["ProbeError", "evaluate_fractions", "evaluate_probe", "joint_target_holds",
           "load_probes", "needs_joint_record", "outcome_check", "probe_states"]


class ProbeError(SimjudgeError, ValueError):
    """A probe file or probe state is malformed; the message says what to fix."""


def joint_target_holds(target: JointTarget, initial: float, final: float,
                       maximum: float) -> bool:
    """Whether one joint target holds on an episode (range fractions of its joint).

    The interval test is the target's shared predicate
    (:meth:`~simjudge.tasks.spec.goal.JointTarget.success_predicate`, a
    :class:`~simjudge.envs.success.JointIn` or, for a relative target, a
    :class:`~simjudge.envs.success.JointChange`); what the episode adds is which fraction it
    is tested on (a spring joint: the largest) and a two-step target's first step.
    """
    if target.reached is not None and not in_interval(maximum, target.reached, None,
                                                      TARGET_TOLERANCE):
        return False
    predicate = target.success_predicate()
    if isinstance(predicate, JointChange):
        return predicate.contains_change(initial, final)
    seen = maximum if target.spring and target.direction == "open" else final
    return predicate.contains(seen)


def evaluate_fractions(goal: TaskGoal, initial: Mapping[str, float], final: Mapping[str, float],
                       maximum: Mapping[str, float]) -> dict[str, Any]:
    """``{"holds", "start_ok", "facts"}`` of a goal on one episode, keyed by joint name.

    Raises:
        ProbeError: The goal has a placement (joint state cannot show it).
    """
    if len(goal.joint_targets) < len(goal.targets):
        raise ProbeError("the goal has a placement, which joint-state probes cannot show; "
                         "evaluate it on a scene (TaskGoal.check)")
    facts: list[dict[str, Any]] = []
    for t in goal.joint_targets:
        i, f, m = initial[t.joint], final[t.joint], maximum[t.joint]
        facts.append({"part": t.joint, "kind": "joint", "holds": joint_target_holds(t, i, f, m),
                      "done_at_start": joint_target_holds(t, i, i, i),
                      "wrong_side": _wrong_side(t, i)})
    for u in goal.unchanged:
        i, f, m = initial[u.joint], final[u.joint], maximum[u.joint]
        facts.append({"part": u.joint, "kind": "unchanged", "holds": u.holds(i, f, m)})
    starts = [c.holds(initial[c.joint]) for c in goal.starts]
    joints = [x for x in facts if x["kind"] == "joint"]
    done = all(x["done_at_start"] for x in joints)
    wrong = any(x["wrong_side"] for x in joints)
    return {"holds": all(x["holds"] for x in facts),
            "start_ok": all(starts) and not done and not wrong, "facts": facts}


def _wrong_side(target: JointTarget, initial: float) -> bool:
    """Whether moving in the target's direction cannot reach its end interval from ``initial``.

    Closing to 0.25 from 0.1, opening to 0.5 from 0.8, opening a little from fully open; not
    for a spring press or a two-step target (its first step moves the other way).
    """
    if target.relative:  # no room for the change: opening a little from fully open
        room = 1.0 - initial if target.direction == "open" else initial
        return room < target.low - 1e-9
    if target.spring or target.reached is not None:
        return False
    if target.direction == "close":
        return target.low > 0.0 and initial < target.low - 1e-9
    return target.high < 1.0 and initial > target.high + 1e-9


def probe_states(probe: Mapping[str, Any], joints: list[str] | None = None
                 ) -> tuple[dict[str, float], dict[str, float], dict[str, float]]:
    """``(initial, final, max)`` of a probe with the defaults filled in for ``joints``.

    Raises:
        ProbeError: A key other than initial/final/max, a non-number, a fraction outside
            [0, 1], or a joint not in ``joints``.
    """
    extra = set(probe) - {"initial", "final", "max", "holds", "start_ok"}
    if extra:
        raise ProbeError(f"probe keys {sorted(extra)} are not initial/final/max")
    parts = {}
    for key in ("initial", "final", "max"):
        value = probe.get(key, {})
        if not isinstance(value, Mapping):
            raise ProbeError(f"probe {key!r} must be an object of joint -> fraction")
        for joint, fraction in value.items():
            if joints is not None and joint not in joints:
                raise ProbeError(f"probe {key!r} names {joint!r}; the asset's joints are "
                                 f"{', '.join(joints)}")
            if not isinstance(fraction, int | float) or not 0.0 <= fraction <= 1.0:
                raise ProbeError(f"probe {key}[{joint!r}] = {fraction!r}: give a fraction "
                                 "of the joint's range in [0, 1]")
        parts[key] = {k: float(v) for k, v in value.items()}
    names = set(joints or []) | {j for v in parts.values() for j in v}
    initial = {j: parts["initial"].get(j, 0.0) for j in names}
    final = {j: parts["final"].get(j, initial[j]) for j in names}
    maximum = {j: parts["max"].get(j, max(initial[j], final[j])) for j in names}
    return initial, final, maximum


def evaluate_probe(goal: TaskGoal, probe: Mapping[str, Any],
                   joints: list[str] | None = None) -> dict[str, bool]:
    """``{"holds": bool, "start_ok": bool}`` of a goal on one probe state."""
    names = sorted({*(joints or []), *(t.joint for t in goal.joint_targets),
                    *(u.joint for u in goal.unchanged), *(c.joint for c in goal.starts)})
    initial, final, maximum = probe_states(probe, names if joints else None)
    for j in names:
        initial.setdefault(j, 0.0)
        final.setdefault(j, initial[j])
        maximum.setdefault(j, max(initial[j], final[j]))
    result = evaluate_fractions(goal, initial, final, maximum)
    return {"holds": result["holds"], "start_ok": result["start_ok"]}


def load_probes(path: str | Path) -> list[dict[str, Any]]:
    """The probe states of a STATES.json file (a JSON list of probe objects).

    Raises:
        ProbeError: The file is missing, not JSON, or not a list of objects.
    """
    try:
        data = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise ProbeError(f"{path}: no such file; give a JSON list of probe states") from None
    except json.JSONDecodeError as exc:
        raise ProbeError(f"{path} is not JSON ({exc}); give a JSON list of probe states") from None
    if not isinstance(data, list) or not all(isinstance(p, dict) for p in data):
        raise ProbeError(f"{path} must hold a JSON list of probe objects "
                         '({"initial": {...}, "final": {...}, "max": {...}})')
    return data


def needs_joint_record(goal: TaskGoal) -> bool:
    """Whether the goal has parts its env goal cannot check live.

    Parts that must stay put, a two-step target's first step, a change from the start, a
    spring press: they are checked on the run's recorded joints (:func:`outcome_check`).
    """
    return bool(goal.unchanged) or any(
        t.reached is not None or t.relative or t.spring for t in goal.joint_targets)


def _fraction(record: Mapping[str, Any], key: str) -> float | None:
    value = record.get(key)
    if isinstance(value, Mapping):
        value = value.get("fraction")
    return float(value) if isinstance(value, int | float) else None


def outcome_check(goal: TaskGoal, initial_joints: Mapping[str, Any],
                  final_joints: Mapping[str, Any], max_joints: Mapping[str, Any]
                  ) -> tuple[bool, list[str]]:
    """Whether the whole goal holds on a run's recorded joints, and what did not.

    The records are an outcome's ``{"<object>/<joint>": {"fraction": f}}``; a joint the
    record lacks does not hold (it cannot be shown).
    """
    failed: list[str] = []
    for t in goal.joint_targets:
        i, f = _fraction(initial_joints, t.key), _fraction(final_joints, t.key)
        m = _fraction(max_joints, t.key)
        if i is None or f is None:
            failed.append(f"{t.key}: not recorded")
        elif not joint_target_holds(t, i, f, max(i, f, m if m is not None else 0.0)):
            failed.append(f"{t.key} ended at {f:.2f} (max {m if m is not None else f:.2f}): "
                          f"{t.describe()}")
    for u in goal.unchanged:
        i, f = _fraction(initial_joints, u.key), _fraction(final_joints, u.key)
        m = _fraction(max_joints, u.key)
        if i is None or f is None:
            failed.append(f"{u.key}: not recorded")
        elif not u.holds(i, f, max(i, f, m if m is not None else 0.0)):
            failed.append(f"{u.key} moved from {i:.2f} to {f:.2f}: {u.describe()}")
    return not failed, failed
