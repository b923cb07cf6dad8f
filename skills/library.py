"""On-disk records of executed subtasks: run directories and the skill library.

**Run directory** (:class:`RunDir`, written by
:func:`~simjudge.skills.executor.execute_solution`)::

    RUN/config.json           seed, reward solver, budget, solution digest (checked on resume)
    RUN/solution.yaml         the solution executed
    RUN/verdicts.jsonl        one SubtaskVerdict per line, in subtask order
    RUN/summary.json          task success, goal facts, config, seed, versions
    RUN/solution.mp4          frames of all subtasks (primitives and SAC rollouts)
    RUN/subtasks/NN/verdict.json, start_state.json, end_state.json (SimState.to_dict),
                   video.mp4, trajectory.json (primitives: recorded robot commands),
                   actions.json (SAC: the final rollout's actions), policy.zip + policy.json (SAC)

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

__all__ = [
    "ReplayResult",
    "RunDir",
    "SkillLibrary",
    "SkillRecord",
    "SubtaskVerdict",
    "default_skills_root",
    "replay_commands",
    "state_distance",
]


@dataclass
class SubtaskVerdict:
    """Outcome of one subtask (one line of ``verdicts.jsonl``).

    Attributes:
        index: Position in the solution.
        name: Subtask name.
        kind: ``primitive`` or ``reward``.
        success: Whether the subtask's success condition held at its end.
        solver: ``motion-planning``, ``sac`` or ``oracle``.
        reason: Why it failed (empty on success).
        error_type: Type name of the generated-code error, if one occurred.
        steps: Env steps spent (SAC: training plus the final rollout).
        wall_time_s: Wall time.
        policy: Saved SAC policy (``.zip``), if any.
        details: Primitive calls, or SAC metrics and evaluation history.
    """

    index: int
    name: str
    kind: str
    success: bool
    solver: str = ""
    reason: str = ""
    error_type: str | None = None
    steps: int = 0
    wall_time_s: float = 0.0
    policy: str | None = None
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SubtaskVerdict:
        """Inverse of :meth:`to_dict`."""
        return cls(**data)


def _write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, default=_json_default) + "\n")
    tmp.replace(path)  # atomic: a crash never leaves half a verdict for resume to trust


def _json_default(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    return str(value)


def _read_json(path: Path) -> Any:
    return json.loads(path.read_text())


def _write_video(frames: list[np.ndarray], path: Path, fps: int) -> None:
    from simjudge.envs.wrappers import write_video

    if frames:
        write_video(frames, path, fps=fps)


def _read_video(path: Path) -> list[np.ndarray]:
    import imageio.v2 as imageio

    if not path.exists():
        return []
    with imageio.get_reader(path) as reader:
        return [np.asarray(frame) for frame in reader]


class RunDir:
    """The run directory of one solution execution (layout in the module docstring).

    :param root: The folder (created if missing).
    """

    OUTPUTS = ("verdicts.jsonl", "summary.json", "solution.mp4")

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    def subtask_dir(self, index: int) -> Path:
        """Folder of subtask ``index``."""
        return self.root / "subtasks" / f"{index:02d}"

    def prepare(self, solution: Any, config: dict[str, Any], resume: bool) -> None:
        """Check a previous run is compatible (when resuming) or clear it; write the inputs.

        Raises:
            ValueError: Resuming a run of another solution, seed or reward solver.
        """
        digest = hashlib.sha256(solution.to_yaml().encode()).hexdigest()[:16]
        record = {**config, "solution_digest": digest}
        old_path = self.root / "config.json"
        if resume and old_path.exists():
            old = _read_json(old_path)
            keys = ("solution_digest", "seed", "reward_solver")
            changed = [k for k in keys if old.get(k) != record.get(k)]
            if changed:
                raise ValueError(
                    f"{self.root} holds a run with different {', '.join(changed)}; resume only "
                    "continues the same solution, seed and solver. Use a new output folder, or "
                    "pass resume=False (--no-resume) to overwrite it"
                )
        if not resume:
            shutil.rmtree(self.root / "subtasks", ignore_errors=True)
            for name in self.OUTPUTS:
                (self.root / name).unlink(missing_ok=True)
        self.root.mkdir(parents=True, exist_ok=True)
        _write_json(old_path, record)
        (self.root / "solution.yaml").write_text(solution.to_yaml())

    def save_subtask(
        self,
        verdict: SubtaskVerdict,
        start: SimState,
        end: SimState,
        frames: list[np.ndarray],
        fps: int,
    ) -> None:
        """Write a subtask's files; the verdict last, so it marks the subtask finished."""
        where = self.subtask_dir(verdict.index)
        where.mkdir(parents=True, exist_ok=True)
        _write_json(where / "start_state.json", start.to_dict())
        _write_json(where / "end_state.json", end.to_dict())
        details = verdict.details
        if "trajectory" in details:
            _write_json(where / "trajectory.json", details.pop("trajectory"))
        if "actions" in details.get("rollout", {}):
            _write_json(where / "actions.json", details["rollout"].pop("actions"))
        _write_video(frames, where / "video.mp4", fps)
        _write_json(where / "verdict.json", verdict.to_dict())

    def load_subtask(self, index: int) -> tuple[SubtaskVerdict, SimState] | None:
        """A finished subtask's verdict and end state, or None if it did not finish."""
        where = self.subtask_dir(index)
        if not (where / "verdict.json").exists() or not (where / "end_state.json").exists():
            return None
        verdict = SubtaskVerdict.from_dict(_read_json(where / "verdict.json"))
        return verdict, SimState.from_dict(_read_json(where / "end_state.json"))

    def finish(self, summary: Any, config: dict[str, Any], video: bool, fps: int) -> None:
        """Write ``verdicts.jsonl``, ``summary.json`` and ``solution.mp4``."""
        from .rollout import versions

        lines = [json.dumps(v.to_dict(), default=_json_default) for v in summary.verdicts]
        (self.root / "verdicts.jsonl").write_text("".join(line + "\n" for line in lines))
        record = asdict(summary)
        record["verdicts"] = [
            {k: v[k] for k in ("index", "name", "kind", "success", "reason", "error_type", "steps")}
            for v in record["verdicts"]
        ]
        found = versions()
        if any(v.solver == "sac" for v in summary.verdicts):
            from importlib.metadata import version

            found.update(torch=version("torch"), stable_baselines3=version("stable-baselines3"))
        record.update(config=config, seed=config.get("seed"), versions=found)
        if video:
            frames = [
                f
                for v in summary.verdicts
                for f in _read_video(self.subtask_dir(v.index) / "video.mp4")
            ]
            if frames:
                _write_video(frames, self.root / "solution.mp4", fps)
                record["video"] = "solution.mp4"
        _write_json(self.root / "summary.json", record)


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

    :param root: Library folder; default :func:`default_skills_root`.
    """

    def __init__(self, root: str | Path | None = None) -> None:
        self.root = Path(root) if root is not None else default_skills_root()

    def add_from_run(self, run_dir: RunDir, index: int, solution: Any, seed: int) -> SkillRecord:
        """Copy subtask ``index`` of an executed run into the library."""
        src = run_dir.subtask_dir(index)
        verdict = SubtaskVerdict.from_dict(_read_json(src / "verdict.json"))
        subtask = solution.subtasks[index].model_dump(mode="json")
        scene = solution.scene.model_dump(mode="json", by_alias=True)
        start = _read_json(src / "start_state.json")
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
        from .rollout import versions

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
        _write_json(dest / "skill.json", data)
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
        return SkillRecord(**_read_json(path), path=str(path.parent))

    def replay(self, skill_id: str, video: str | Path | None = None) -> ReplayResult:
        """Replay a skill from its start state (SAC: deterministic policy; primitive:
        recorded commands) and compare the end state with the recorded one."""
        record = self.get(skill_id)
        folder = Path(record.path)
        recorded_end = SimState.from_dict(_read_json(folder / "end_state.json"))
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
            env = SimEnv(
                record.scene, scene_seed=record.seed, render_mode="rgb_array" if video else None
            )
            try:
                env.reset(seed=record.seed)
                env.set_state(SimState.from_dict(_read_json(folder / "start_state.json")))
                if video:
                    frames.append(env.render())
                on_step = (lambda: frames.append(env.render())) if video else None
                steps = replay_commands(env, _read_json(folder / "trajectory.json"), on_step)
                end, success = env.get_state(), None
            finally:
                env.close()
        out = None
        if video is not None:
            _write_video(frames, Path(video), 25)
            out = str(video)
        return ReplayResult(skill_id, steps, success, state_distance(end, recorded_end), out)
