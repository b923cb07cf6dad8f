"""Recorded inputs and exchanges of the VLM judges' tests, and the script that records them.

Inputs: two real rollouts of ``OpenDrawer-v0`` (PyBullet, seed 0) rendered by the exterior
camera and shrunk to 48 px: the scripted oracle (opens the drawer) and an idle policy
(zero actions, 10 steps). Frames are PNG files under ``data/frames/<episode>/``, the
privileged Φ per step in ``data/episodes.json``.

Exchanges: every request the judge configurations in :data:`RUNS` make over those frames,
sent to a real OpenAI-compatible server (llama.cpp's ``llama_cpp.server`` with the embedded
SmolLM2-135M, text-only: it ignores the images, see ``text_only_server.py``) and stored by
the replay cache under ``data/exchanges/``. The tests replay them (``mode="replay"``): the
judges must send exactly the recorded requests (images included) to get the replies.

Re-record (about 2 minutes, one core): ``python tests/judges/vlm/fixtures.py``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).parent
DATA = HERE / "data"
EXCHANGES = DATA / "exchanges"
SIZE = 48
TASK = "Open the drawer of the storage furniture"
MODEL = "smollm2-135m"

RUNS: dict[str, dict[str, Any]] = {
    "step": {"judge": "vlm-step", "episode": "oracle", "every": 5, "size": SIZE, "max_tokens": 48},
    "step_k3": {"judge": "vlm-step", "episode": "idle", "every": 10, "k": 3, "size": SIZE,
                "max_tokens": 48},
    "episode_k2": {"judge": "image-episode", "episode": "oracle", "k": 2, "size": SIZE,
                   "max_tokens": 64},
    "episode_json": {"judge": "image-episode", "episode": "oracle", "k": 2, "size": SIZE,
                     "max_tokens": 64, "seed": 7},
    "preference": {"judge": "preference", "episodes": ("oracle", "idle"), "swap": True,
                   "size": SIZE, "max_tokens": 48},
}
"""The recorded judge configurations (tests build the same judges from them)."""

SERVER_BODY: dict[str, dict[str, Any]] = {
    "episode_json": {"response_format": {"type": "json_object", "schema": {
        "type": "object", "required": ["critique", "score"],
        "properties": {"critique": {"type": "string"}, "score": {"type": "integer"}}}}},
}
"""Server-side options of a run's recording (llama.cpp's grammar-constrained JSON, sent as
the client's ``extra_body``; not part of the request hash). SmolLM2 does not follow the
``<critique>``/``<score>`` format on its own (``episode_k2`` records that: no valid score),
so ``episode_json`` constrains it to a JSON critique and score."""


def load_frames(episode: str) -> list[np.ndarray]:
    """The recorded frames of ``oracle`` or ``idle``, step 0 first."""
    from PIL import Image

    paths = sorted((DATA / "frames" / episode).glob("*.png"))
    return [np.asarray(Image.open(p).convert("RGB")) for p in paths]


def load_progress(episode: str) -> list[float]:
    """The privileged Φ per step of a recorded episode."""
    return list(json.loads((DATA / "episodes.json").read_text())[episode]["progress"])


def judge_for(run: str, client: Any) -> Any:
    """The judge of one recorded configuration, on ``client``."""
    from simjudge.judges import make_judge

    params = {k: v for k, v in RUNS[run].items() if k not in ("judge", "episode", "episodes")}
    return make_judge(RUNS[run]["judge"], client=client, **params)


def replay_client(mode: str = "replay", inner: Any = None, log: Any = None) -> Any:
    """The replay cache over the recorded exchanges (``inner``: the server's client)."""
    from simjudge.llm import OpenAIClient, ReplayClient

    inner = inner or OpenAIClient(MODEL, base_url="http://127.0.0.1:9/v1", max_retries=0)
    return ReplayClient(inner, EXCHANGES, mode=mode, log=log)


def run_step(judge: Any, frames: list[np.ndarray]) -> list[Any]:
    """Feed an episode's frames to a step judge (last step truncated); its signals."""
    from simjudge.judges import JudgeContext, Transition

    judge.reset(JudgeContext(task=TASK))
    last = len(frames) - 1
    return [judge.observe(Transition(step=i, frame=f, truncated=i == last))
            for i, f in enumerate(frames)]


def run_all(client_for: Any) -> dict[str, Any]:
    """Every configuration of :data:`RUNS` on ``client_for(run)``; their signals by run."""
    out: dict[str, Any] = {}
    for run, cfg in RUNS.items():
        judge = judge_for(run, client_for(run))
        if cfg["judge"] == "vlm-step":
            out[run] = run_step(judge, load_frames(cfg["episode"]))
        elif cfg["judge"] == "image-episode":
            out[run] = judge.judge_frames(load_frames(cfg["episode"]), TASK)
        else:
            a, b = (load_frames(e) for e in cfg["episodes"])
            out[run] = judge.judge_pair(a, b, task=TASK)
    return out


def _render(policy: str, steps: int) -> tuple[list[np.ndarray], list[float]]:
    from simjudge.judges.vlm.images import shrink
    from simjudge.skills.scripted import ScriptedPolicy
    from simjudge.tasks.spec import make_task_env

    env = make_task_env("OpenDrawer-v0", render_mode="rgb_array", horizon=steps)
    obs, info = env.reset(seed=0)
    act = ScriptedPolicy(env.unwrapped, seed=0) if policy == "oracle" else None
    frames, progress = [shrink(env.render(), SIZE)], [float(info["progress"])]
    for _ in range(steps):
        action = act(obs) if act else np.zeros(env.action_space.shape, np.float32)
        obs, _, terminated, truncated, info = env.step(action)
        frames.append(shrink(env.render(), SIZE))
        progress.append(float(info["progress"]))
        if terminated or truncated:
            break
    env.close()
    return frames, progress


def record() -> None:
    """Render the two episodes, then record every run's exchanges on the real server."""
    from PIL import Image

    from simjudge.llm import OpenAIClient
    from tests.judges.vlm.text_only_server import serve

    episodes = {}
    for name, policy, steps in (("oracle", "oracle", 100), ("idle", "idle", 10)):
        frames, progress = _render(policy, steps)
        folder = DATA / "frames" / name
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        for i, frame in enumerate(frames):
            Image.fromarray(frame).save(folder / f"{i:03d}.png")
        episodes[name] = {"policy": policy, "seed": 0, "task": "OpenDrawer-v0",
                          "progress": [round(p, 6) for p in progress]}
    (DATA / "episodes.json").write_text(json.dumps(episodes, indent=1))
    shutil.rmtree(EXCHANGES, ignore_errors=True)
    with serve() as base_url:
        def client_for(run: str) -> Any:
            inner = OpenAIClient(MODEL, base_url=base_url, extra_body=SERVER_BODY.get(run))
            return replay_client("record", inner)

        for run, result in run_all(client_for).items():
            last = result[-1] if isinstance(result, list) else result
            print(f"{run}: {last.reason}")


if __name__ == "__main__":
    import sys

    sys.path.insert(0, str(HERE.parents[2]))
    record()
