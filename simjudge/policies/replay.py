"""``skill:ID``: a stored skill of the skill library replayed as joint-position actions.

The skill's joint trajectory is read once, when the policy is made: a planned
(``primitive``) skill's recorded commands (``trajectory.json``), or, for a learned
(``reward``) skill, the commands of one deterministic rollout of its SAC policy from its
start state. The policy then plays it open loop, one ``joint_position`` action per control
step (:mod:`~simjudge.policies.joint_actions`), and holds the last action after the
end. It reproduces the skill only from the skill's start state: reset the env with
``options={"state": policy.start_state}`` (the skill's own scene and seed).

Spec: ``skill:ID[,root=DIR,chunk=N]`` (``root`` default: the library of
:func:`~simjudge.skills.library.default_skills_root`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from simjudge.envs.sim_state import SimState
from simjudge.skills.library import SkillLibrary, SkillRecord
from simjudge.tasks.spec import read_json

from .base import Observation, PolicyError, PolicyInfo, PolicyTask
from .joint_actions import JointPlanPlayer, commands_to_actions

__all__ = ["SkillReplayPolicy", "skill_actions"]


def skill_actions(record: SkillRecord) -> np.ndarray:
    """The skill's joint trajectory as ``(N, 8)`` joint-position actions."""
    folder = Path(record.path)
    start = SimState.from_dict(read_json(folder / "start_state.json"))
    if record.kind == "primitive":
        events = read_json(folder / "trajectory.json")
        return commands_to_actions(events, start.robot_qpos[:7], start.suction_on)
    if not (folder / "policy.zip").exists():
        solver = record.metrics.get("solver", "?")
        raise PolicyError(
            f"skill {record.id!r} was solved by {solver!r} and stores no policy.zip or "
            "trajectory to replay; replay planned (primitive) or SAC-learned skills"
        )
    from simjudge.skills.sac import load_policy
    from simjudge.skills.subtask_env import SubtaskEnv, rollout_policy

    model, spec = load_policy(folder / "policy.zip")
    env = SubtaskEnv(spec)
    try:
        with env.sim.record_commands() as events:
            rollout_policy(model, env)
    finally:
        env.close()
    return commands_to_actions(events, start.robot_qpos[:7], start.suction_on)


class SkillReplayPolicy:
    """A library skill replayed open loop as joint-position actions (see the module docstring).

    Args:
        skill: Skill id (``simjudge skills list``).
        root: Library folder; None = the default library.
        chunk: Actions per query.
    """

    def __init__(self, skill: str, root: str | None = None, chunk: int = 8) -> None:
        library = SkillLibrary(root)
        try:
            record = library.get(str(skill))
        except LookupError as exc:
            raise PolicyError(f"skill:{skill}: {exc}; list them with `simjudge skills list`") from exc
        self.record = record
        self.start_state = SimState.from_dict(read_json(Path(record.path) / "start_state.json"))
        self._player = JointPlanPlayer(chunk)
        self._actions = skill_actions(record)
        self._player.load(self._actions)  # ready without reset (openpi's client sends none)
        self._info = PolicyInfo(
            "skill",
            action_space="joint_position",
            metadata={
                "skill": record.id,
                "kind": record.kind,
                "task": record.task,
                "subtask": record.name,
                "steps": len(self._actions),
                "library": str(library.root),
            },
        )

    @property
    def info(self) -> PolicyInfo:
        """Name, action space (joint_position); observes nothing (open loop)."""
        return self._info

    @property
    def actions(self) -> np.ndarray:
        """The whole replayed trajectory ``(N, 8)``."""
        return self._actions.copy()

    def reset(self, task: PolicyTask, seed: int) -> None:
        """Start the trajectory from its first action (the replay is deterministic)."""
        self._player.load(self._actions)

    def act(self, obs: Observation) -> np.ndarray:
        """The next chunk of the trajectory; the last action once it is played out."""
        return self._player.next_chunk()

    def close(self) -> None:
        """Nothing to release."""
