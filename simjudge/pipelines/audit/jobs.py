"""The audit's independent jobs: snapshots, ε calibration, episodes, re-scoring replays.

Each is a module-level function of plain arguments (so the ``local`` and ``ray``
executors can send it to a worker) and returns JSON data that the executor's
:class:`~simjudge.executors.JobStore` records atomically under the run directory.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import imageio.v2 as imageio
import numpy as np

from simjudge.envs.sim_state import SimState
from simjudge.envs.world import PHYSICS_TIMESTEP
from simjudge.judges import JudgeRecord, make_judge
from simjudge.judges.episode import EpisodeRecord
from simjudge.judges.metrics import calibrate_epsilon
from simjudge.policies import make_policy, run_episode
from simjudge.policies.remote import with_frame_limit
from simjudge.policies.wire_limits import DEFAULT_MAX_FRAME_MB, redact_secrets
from simjudge.tasks.spec import load_task, make_task_env, read_json

__all__ = [
    "VIDEO_SIZE",
    "calibrate_job",
    "episode_job",
    "judge_slug",
    "rescore_job",
    "snapshot_job",
]

VIDEO_SIZE = (120, 160)
"""(H, W) of recorded videos."""
CALIBRATION_STEPS = 40


def judge_slug(spec: str) -> str:
    """A folder name for a judge spec (``noisy:sigma=0.05`` -> ``noisy_sigma_0.05``)."""
    return re.sub(r"[^A-Za-z0-9_.\-]+", "_", spec).strip("_") or "judge"


def _env(task: str, horizon: int | None, randomize: bool = True) -> Any:
    kwargs: dict[str, Any] = {} if randomize else {"randomization": None}
    if horizon is not None:
        kwargs["horizon"] = horizon
    return make_task_env(task, **kwargs)


def _snapshot(run_root: str, snapshot: str) -> dict[str, Any]:
    return read_json(Path(run_root) / "snapshots" / f"{snapshot}.json")


def _randomize(run_root: str, snapshot: str) -> bool:
    """Whether the snapshot was taken in a randomized world (older snapshots: yes)."""
    return bool(_snapshot(run_root, snapshot).get("randomize", True))


def _reset_options(run_root: str, snapshot: str) -> dict[str, Any]:
    return {"state": SimState.from_dict(_snapshot(run_root, snapshot)["state"])}


def snapshot_job(task: str, seed: int, horizon: int | None, randomize: bool = True) -> dict[str, Any]:
    """The initial state of ``task`` at ``seed``: what every policy starts from.

    With ``randomize`` the world is the task's for that seed (``world`` holds the sample,
    and every episode from the snapshot resets with the same seed, so into the same world);
    without, the fixed start (``--no-randomize``).
    """
    env = _env(task, horizon, randomize)
    try:
        env.reset(seed=seed)
        spec = load_task(task)
        return {
            "task": task,
            "seed": seed,
            "prompt": spec.description or spec.name,
            "horizon": env.horizon,
            "frame_rate_hz": 1.0 / (env.frameskip * PHYSICS_TIMESTEP),
            "randomize": randomize,
            "world": env.world_sample,
            "state": env.get_state().to_dict(),
        }
    finally:
        env.close()


def calibrate_job(run_root: str, task: str, seed: int, judge: str, snapshot: str) -> dict[str, Any]:
    """ε of ``judge`` on ``task``: its Φ on a static scene (zero actions), √2·σ̂·z."""
    env = JudgeRecord(_env(task, CALIBRATION_STEPS, _randomize(run_root, snapshot)), make_judge(judge),
                      record_states=False)
    try:
        run_episode(env, make_policy("zero"), seed, options=_reset_options(run_root, snapshot))
        record = env.last_record
        assert record is not None
        phi = [p for p in record.phi if p is not None]
        if len(phi) < 2:
            return {"task": task, "judge": judge, "epsilon": None, "frames": len(phi)}
        return {"task": task, "judge": judge, "epsilon": calibrate_epsilon(phi), "frames": len(phi)}
    finally:
        env.close()


def _wrap(env: Any, folder: Path, judges: list[str], epsilon: dict[str, float]) -> tuple[Any, list[JudgeRecord]]:
    records = []
    for spec in judges:
        env = JudgeRecord(env, make_judge(spec), folder=folder / judge_slug(spec), epsilon=epsilon[spec],
                          key=f"judge_record/{judge_slug(spec)}")
        records.append(env)
    return env, records


def _judged(records: list[JudgeRecord], judges: list[str], run_root: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for spec, wrapper in zip(judges, records, strict=True):
        record = wrapper.last_record
        assert record is not None
        out[spec] = {
            "phi": record.phi,
            "verdict": record.verdict,
            "opd": record.opd,
            "observe_seconds": record.judge_stats.get("observe_seconds", 0.0),
            "episode": str(wrapper.written[-1].relative_to(run_root)) if wrapper.written else None,
        }
    return out


def episode_job(
    run_root: str,
    name: str,
    spec: str,
    task: str,
    seed: int,
    judges: list[str],
    epsilon: dict[str, float],
    horizon: int | None,
    video: bool,
    max_frame_mb: float = DEFAULT_MAX_FRAME_MB,
) -> dict[str, Any]:
    """One audited episode of policy ``name`` on ``task`` from the ``seed`` snapshot.

    A remote policy reads frames of at most ``max_frame_mb`` MiB (unless its spec sets its own).
    """
    snapshot = f"{task}__s{seed:03d}"
    folder = Path(run_root) / "episodes" / name / task / f"s{seed:03d}"
    env, records = _wrap(_env(task, horizon, _randomize(run_root, snapshot)), folder, judges, epsilon)
    policy = make_policy(with_frame_limit(spec, max_frame_mb))
    try:
        prompt = read_json(Path(run_root) / "snapshots" / f"{snapshot}.json")["prompt"]
        result = run_episode(
            env,
            policy,
            seed,
            prompt=prompt,
            options=_reset_options(run_root, snapshot),
            video_size=VIDEO_SIZE if video else None,
        )
    finally:
        policy.close()
        env.close()
    video_path = _write_video(Path(run_root), f"{name}__{snapshot}", result.frames) if video else None
    judged = _judged(records, judges, run_root)
    judge_seconds = sum(j["observe_seconds"] for j in judged.values())
    timing: dict[str, Any] = dict(result.timing())
    timing["latencies_ms"] = [round(1000.0 * t, 3) for t in result.latencies]
    for stat in ("reconnects", "server_ms"):  # remote policies: connection health
        value = getattr(policy, stat, None)
        if value is not None:
            timing[stat] = value if isinstance(value, int) else [round(v, 3) for v in value]
    timing["judge_seconds"] = judge_seconds
    timing["physics_seconds"] = max(timing["env_seconds"] - judge_seconds, 0.0)
    return {
        "policy": name,
        "spec": redact_secrets(policy.info.spec or spec),
        "policy_info": policy.info.to_dict(),
        "task": task,
        "seed": seed,
        "steps": result.steps,
        "success": result.success,
        "progress": result.progress,
        "world": env.unwrapped.world_sample,
        "judges": judged,
        "timing": timing,
        "video": video_path,
    }


def _write_video(root: Path, key: str, frames: list[np.ndarray]) -> str | None:
    if not frames:
        return None
    path = root / "videos" / f"{key}.webm"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".part.webm")
    # VP8 plays in every browser build (Debian's Chromium has no H.264); realtime = fast
    clip: list[Any] = list(frames)
    imageio.mimwrite(tmp, clip, fps=25, codec="libvpx", macro_block_size=8,
                     ffmpeg_log_level="error",
                     ffmpeg_params=["-deadline", "realtime", "-cpu-used", "8", "-b:v", "300k"])
    tmp.replace(path)
    return str(path.relative_to(root))


def rescore_job(run_root: str, result: dict[str, Any], judges: list[str], epsilon: dict[str, float]) -> dict[str, Any]:
    """Re-judge a stored episode: replay its recorded actions from its snapshot."""
    task, seed = result["task"], int(result["seed"])
    first = next(iter(result["judges"].values()))
    if not first.get("episode"):
        raise ValueError(f"episode {result['policy']}/{task}/s{seed} has no stored episode file")
    record = EpisodeRecord.load(Path(run_root) / first["episode"])
    actions = [s.action for s in record.steps[1:]]
    folder = Path(run_root) / "episodes" / result["policy"] / task / f"s{seed:03d}"
    snapshot = f"{task}__s{seed:03d}"
    horizon = int(read_json(Path(run_root) / "snapshots" / f"{snapshot}.json")["horizon"])
    env, records = _wrap(_env(task, horizon, _randomize(run_root, snapshot)), folder, judges, epsilon)
    progress: list[float] = []
    try:
        _, info = env.reset(seed=seed, options=_reset_options(run_root, snapshot))
        progress.append(float(info["progress"]))
        for action in actions:
            _, _, terminated, truncated, info = env.step(np.asarray(action, dtype=np.float32))
            progress.append(float(info["progress"]))
            if terminated or truncated:
                break
    finally:
        env.close()
    exact = len(progress) == len(result["progress"]) and bool(
        np.allclose(progress, result["progress"], atol=1e-9)
    )
    return {"key": f"{result['policy']}__{task}__s{seed:03d}", "replay_exact": exact,
            "judges": _judged(records, judges, run_root)}
