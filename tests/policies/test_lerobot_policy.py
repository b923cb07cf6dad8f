"""``lerobot:PATH``: an ACT policy trained by LeRobot's own trainer on a simjudge dataset.

The checkpoint is trained here with ``lerobot-train`` (a small ACT on state only, a few steps:
this checks the path, not the quality; the zoo's ACT is the trained one). In the LeRobot
environment the policy runs in process; in simjudge's main environment the same spec runs it
in a ``.venv-lerobot`` worker served over the openpi protocol on loopback, and both give the
same actions for the same observation. The zoo's ACT (``zoo:act-PressButton``) is audited
served. Skipped without ``.venv-lerobot`` (``make lerobot``).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

from simjudge.demos.record import DemosRecordConfig, run_record
from simjudge.policies import PolicyError, PolicyTask, make_policy, run_episode
from simjudge.tasks.spec import make_task_env

ROOT = Path(__file__).resolve().parents[2]
LEROBOT_PYTHON = ROOT / ".venv-lerobot" / "bin" / "python"
pytestmark = [pytest.mark.skipif(not LEROBOT_PYTHON.is_file(),
                                 reason="needs the LeRobot environment .venv-lerobot: run `make lerobot`"),
              pytest.mark.timeout(600)]
ENV = {"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1"}

IN_PROCESS = """
import sys, json, numpy as np
from simjudge.policies import PolicyTask, make_policy, run_episode
from simjudge.policies.lerobot_policy import LeRobotPolicy
from simjudge.tasks.spec import make_task_env
policy = make_policy("lerobot:" + sys.argv[1])
assert isinstance(policy, LeRobotPolicy), type(policy)
env = make_task_env("PressButton-v0")
result = run_episode(env, policy, seed=11)
env.close()
actions = []
for obs in np.load(sys.argv[2]):
    policy.reset(PolicyTask("PressButton-v0"), 0)
    actions.append(policy.act({"state": obs, "prompt": "Press the first button on the button panel."}).tolist())
print("RESULT", json.dumps({"steps": result.steps, "success": result.success, "actions": actions}))
"""


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("act")
    demos = root / "demos"
    run_record(DemosRecordConfig(tasks=("PressButton-v0",), episodes=10, out=str(demos), image_size=0), log=None)
    args = [str(ROOT / ".venv-lerobot" / "bin" / "lerobot-train"), "--dataset.repo_id=simjudge/test",
            f"--dataset.root={demos}", "--policy.type=act", "--policy.device=cpu", "--policy.push_to_hub=false",
            "--policy.dim_model=32", "--policy.n_heads=2", "--policy.dim_feedforward=64",
            "--policy.n_encoder_layers=1", "--policy.n_decoder_layers=1", "--policy.chunk_size=5",
            "--policy.n_action_steps=5", "--policy.use_vae=false", "--policy.pretrained_backbone_weights=null",
            f"--output_dir={root / 'train'}", "--steps=20", "--batch_size=8", "--num_workers=0",
            "--log_freq=10", "--save_freq=20", "--eval_freq=0", "--wandb.enable=false"]
    done = subprocess.run(args, cwd=root, capture_output=True, text=True, timeout=400, env=ENV)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    path = root / "train" / "checkpoints" / "last" / "pretrained_model"
    assert (path / "config.json").is_file() and (path / "model.safetensors").is_file()
    return path


@pytest.mark.slow
def test_act_runs_in_process_and_served_alike(checkpoint: Path, tmp_path: Path) -> None:
    env = make_task_env("PressButton-v0")
    try:
        starts = np.stack([env.reset(seed=seed)[0] for seed in (4, 5, 6)])
        np.save(tmp_path / "obs.npy", starts)
        policy = make_policy(f"lerobot:{checkpoint}")  # main environment: no lerobot, a worker
        assert policy.info.name == "lerobot" and policy.info.spec == f"lerobot:{checkpoint}"
        assert policy.info.metadata["server"]["policy"]["metadata"]["lerobot_type"] == "act"
        served = run_episode(env, policy, seed=11)
        actions = []
        for obs in starts:
            policy.reset(PolicyTask("PressButton-v0", prompt="Press the first button on the button panel."), 0)
            actions.append(np.asarray(policy.act({"state": obs, "prompt": "Press the first button on the button panel."})).reshape(7))
        policy.close()
    finally:
        env.close()
    done = subprocess.run([str(LEROBOT_PYTHON), "-c", IN_PROCESS, str(checkpoint), str(tmp_path / "obs.npy")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, env=ENV)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    local = json.loads(next(line for line in done.stdout.splitlines() if line.startswith("RESULT"))[7:])
    # the same network on the same observations; the episodes themselves ran in two environments
    # (numpy builds differ in their last bits, and a rollout amplifies them), so only both ran
    np.testing.assert_allclose(np.stack(actions), local["actions"], atol=1e-5)
    assert np.all(np.abs(np.stack(actions)) <= 1.0) and len({tuple(a) for a in np.round(actions, 6)}) == 3
    assert served.steps > 0 and local["steps"] > 0


@pytest.mark.slow
def test_zoo_act_is_audited_served(tmp_path: Path) -> None:
    from simjudge.pipelines.audit import run_audit
    from simjudge.pipelines.audit.config import AuditConfig

    audit = run_audit(AuditConfig(policy=("act=zoo:act-PressButton",), tasks=("PressButton-v0",), seeds=3,
                                  executor="serial", videos=0, bootstrap=50, report=False,
                                  out=str(tmp_path / "audit")), progress=False)
    cell = audit["tables"]["privileged"]["PressButton-v0"]["act"]
    assert cell["n"] == 3 and cell["unscored"] == 0
    results = [json.loads(p.read_text()) for p in sorted((tmp_path / "audit" / "results").rglob("*.json"))]
    episodes = [r for r in results if r.get("policy") == "act"]
    assert len(episodes) == 3
    assert cell["success"]["k"] == sum(bool(r["success"]) for r in episodes)
    info = episodes[0]["policy_info"]  # served by the .venv-lerobot worker, recorded as lerobot
    assert info["name"] == "lerobot" and info["metadata"]["server"]["policy"]["metadata"]["lerobot_type"] == "act"


def test_a_folder_that_is_no_checkpoint_is_refused(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match="pretrained_model folder"):
        make_policy(f"lerobot:{tmp_path}")
