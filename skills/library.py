"""The skill library: successful executed subtasks kept for reuse and exact replay.

**Skill library** (:class:`SkillLibrary`): one folder per successful skill under
``root`` (default ``$SIMJUDGE_SKILLS_DIR`` or ``~/.cache/simjudge/skills``) with
``skill.json`` (id, kind, task, subtask, scene, seed, metrics, versions),
``start_state.json``, ``end_state.json``, ``video.mp4`` and either ``policy.zip`` +
``policy.json`` (learned with SAC) or ``trajectory.json`` (planned primitive).
:meth:`SkillLibrary.replay` replays a skill exactly from its start state.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from simjudge.envs.sim_env import SimEnv
from simjudge.envs.sim_state import SimState
from simjudge.tasks.spec import RunDir, SubtaskVerdict, read_json, versions, write_json
from simjudge.tasks.spec.task import task_randomization

from .run_files import subtask_dir, write_frames

__all__ = [
    "ReplayResult",
    "SkillLibrary",
    "SkillRecord",
    "default_skills_root",
    "replay_commands",
    "state_distance",
]


# -------------------------------------------------------------------------------------
# the skill library
# -------------------------------------------------------------------------------------
def default_skills_root() -> Path:
    """``$SIMJUDGE_SKILLS_DIR`` if set, else ``~/.cache/simjudge/skills``."""
    env = os.environ.get("SIMJUDGE_SKILLS_DIR")
    return Path(env) if env else Path.home() / ".cache" / "simjudge" / "skills"


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40] or "skill"


@dataclass
class SkillRecord:
    """A skill in the library (the content of its ``skill.json``).

    Attributes:
        id: Folder name: ``<task>-<index>-<subtask>-<hash>``.
        kind: ``primitive`` (planned) or ``reward`` (learned with SAC).
        name: Subtask name.
        task: Task name.
        subtask: The subtask (name, kind, code, action space).
        scene: Scene config dict.
        seed: Scene seed.
        metrics: Success, steps, wall time, SAC metrics.
        created: Unix time.
        versions: Library versions when it was made.
        path: Folder of the skill (not stored in the JSON).
    """

    id: str
    kind: str
    name: str
    task: str
    subtask: dict[str, Any]
    scene: dict[str, Any]
    seed: int
    metrics: dict[str, Any] = field(default_factory=dict)
    created: float = 0.0
    versions: dict[str, str] = field(default_factory=dict)
    path: str = ""


@dataclass
class ReplayResult:
    """A replay of a stored skill.

    Attributes:
        skill_id: The skill.
        steps: Control steps replayed.
        success: SAC skills: the reward's success held; primitives: None (not re-evaluated).
        state_error: Largest difference to the recorded end state (joint and base
            positions; 0 means an exact replay).
        video: Written video, if requested.
    """

    skill_id: str
    steps: int
    success: bool | None
    state_error: float
    video: str | None = None


def state_distance(a: SimState, b: SimState) -> float:
    """Largest absolute difference of robot joints, object poses and object joints."""
    diffs = [np.max(np.abs(np.subtract(a.robot_qpos, b.robot_qpos)))]
    for name, body in a.bodies.items():
        other = b.bodies[name]
        for key in ("pos", "quat", "qpos"):
            if body[key]:
                diffs.append(np.max(np.abs(np.subtract(body[key], other[key]))))
    return float(max(diffs))


def replay_commands(env: SimEnv, events: list[list[Any]], on_step: Any = None) -> int:
    """Re-issue robot commands recorded while a primitive ran; return control steps."""
    robot, steps = env.scene.robot, 0
    for tag, args in events:
        if tag == "step":
            env.backend.step(*args)
            env.elapsed_steps += 1
            steps += 1
            if on_step is not None:
                on_step()
        elif tag == "command":
            robot.command(np.asarray(args[0], dtype=float))
        elif tag == "activate_suction":
            robot.activate_suction(set(args[0]))
        elif tag in ("attach", "release", "break_overloaded_suction"):
            getattr(robot, tag)(*args)
        else:
            raise ValueError(f"unknown recorded command {tag!r}; the trajectory file is corrupt")
    return steps


class SkillLibrary:
    """Skills that succeeded, stored with everything needed to replay them.

    Args:
        root: Library folder; default :func:`default_skills_root`.
    """

    def __init__(self, root: str | Path | None = None) -> None:
        self.root = Path(root) if root is not None else default_skills_root()

    def add_from_run(self, run_dir: RunDir, index: int, solution: Any, seed: int) -> SkillRecord:
        """Copy subtask ``index`` of an executed run into the library."""
        src = subtask_dir(run_dir, index)
        verdict = SubtaskVerdict.from_dict(read_json(src / "verdict.json"))
        subtask = solution.subtasks[index].model_dump(mode="json")
        scene = solution.scene.model_dump(mode="json", by_alias=True)
        start = read_json(src / "start_state.json")
        key = json.dumps([scene, subtask, start, seed], sort_keys=True)
        digest = hashlib.sha256(key.encode()).hexdigest()[:8]
        skill_id = f"{_slug(solution.task)}-{index:02d}-{_slug(subtask['name'])}-{digest}"
        dest = self.root / skill_id
        dest.mkdir(parents=True, exist_ok=True)
        for name in (
            "start_state.json",
            "end_state.json",
            "video.mp4",
            "trajectory.json",
            "actions.json",
            "policy.zip",
            "policy.json",
        ):
            if (src / name).exists():
                shutil.copy2(src / name, dest / name)
        metrics = {k: getattr(verdict, k) for k in ("success", "steps", "wall_time_s", "solver")}
        sac = verdict.details.get("sac")
        if sac:
            metrics.update(
                {
                    k: sac.get(k)
                    for k in ("best_success_rate", "steps_to_success", "env_steps", "net_arch")
                }
            )
        record = SkillRecord(
            id=skill_id,
            kind=verdict.kind,
            name=verdict.name,
            task=solution.task,
            subtask=subtask,
            scene=scene,
            seed=seed,
            metrics=metrics,
            created=time.time(),
            versions=versions(),
        )
        data = asdict(record)
        data.pop("path")
        write_json(dest / "skill.json", data)
        record.path = str(dest)
        return record

    def list(self) -> list[SkillRecord]:
        """All skills, sorted by id."""
        if not self.root.exists():
            return []
        return [
            self.get(p.name) for p in sorted(self.root.iterdir()) if (p / "skill.json").exists()
        ]

    def get(self, skill_id: str) -> SkillRecord:
        """One skill by id.

        Raises:
            LookupError: No such skill; the message lists the ids there are.
        """
        path = self.root / skill_id / "skill.json"
        if not path.exists():
            ids = [p.name for p in sorted(self.root.glob("*")) if (p / "skill.json").exists()]
            raise LookupError(f"no skill {skill_id!r} in {self.root}; skills there are {ids}")
        return SkillRecord(**read_json(path), path=str(path.parent))

    def replay(self, skill_id: str, video: str | Path | None = None) -> ReplayResult:
        """Replay a skill from its start state and compare the end state with the recorded one.

        SAC skills run their deterministic policy; primitive skills their recorded commands.
        """
        record = self.get(skill_id)
        folder = Path(record.path)
        recorded_end = SimState.from_dict(read_json(folder / "end_state.json"))
        frames: list[np.ndarray] = []
        success: bool | None
        if record.kind == "reward":
            from .sac import load_policy, rollout_policy
            from .subtask_env import SubtaskEnv

            model, spec = load_policy(folder / "policy.zip")
            env = SubtaskEnv(spec, render_mode="rgb_array" if video else None)
            try:
                run = rollout_policy(model, env, render=video is not None)
            finally:
                env.close()
            frames, steps, success, end = run.frames, run.steps, run.success, run.end_state
        else:
            sim = SimEnv(  # in the world the skill was recorded in (a built-in task's scene)
                record.scene, scene_seed=record.seed, render_mode="rgb_array" if video else None,
                randomization=task_randomization(record.task, record.scene),
            )
            try:
                sim.reset(seed=record.seed)
                sim.set_state(SimState.from_dict(read_json(folder / "start_state.json")))
                if video:
                    frames.append(sim.render())
                on_step = (lambda: frames.append(sim.render())) if video else None
                steps = replay_commands(sim, read_json(folder / "trajectory.json"), on_step)
                end, success = sim.get_state(), None
            finally:
                sim.close()
        out = None
        if video is not None:
            write_frames(frames, Path(video), 25)
            out = str(video)
        return ReplayResult(skill_id, steps, success, state_distance(end, recorded_end), out)
