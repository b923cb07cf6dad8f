"""The shipped zoo: every entry's weights match their SHA-256, load, act, list, and serve.

The zoo's claims (graded verified success over held-out seeds) are measured by ``simjudge
audit`` and recorded in ``zoo.json``; here: the entries are consistent with their files, span
the grades the docs state, a zoo policy round-trips through the real ``openpi-client``, and
``simjudge policies list`` shows the provenance.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from simjudge.policies import PolicyError, make_policy
from simjudge.policies.zoo import ZOO_DIR, tree_sha256, zoo_entries, zoo_path

ROOT = Path(__file__).resolve().parents[2]
ENTRIES = zoo_entries()
# openpi-client 0.1.2 calls websockets' connect() without a context manager
pytestmark = pytest.mark.filterwarnings("ignore:connect\\(\\) must be used as a context manager")
BC = sorted(name for name, e in ENTRIES.items() if e["kind"] == "bc")


def test_the_zoo_is_graded_over_four_tasks() -> None:
    assert len(ENTRIES) >= 8 and len({e["task"] for e in ENTRIES.values()}) >= 4
    rates = [e["measured"]["success"] for e in ENTRIES.values()]
    assert all(e["measured"]["seeds"] >= 20 for e in ENTRIES.values())
    assert min(rates) <= 0.1 and max(rates) >= 0.9
    assert any(e["kind"] == "lerobot" for e in ENTRIES.values())
    for entry in ENTRIES.values():
        prov = entry["provenance"]
        assert {"command", "episodes", "frames", "seed", "seconds"} <= set(prov), entry["file"]
        assert "/tmp" not in json.dumps(entry) and "/work" not in json.dumps(entry)


@pytest.mark.parametrize("name", sorted(ENTRIES))
def test_weights_match_their_sha256(name: str) -> None:
    entry = ENTRIES[name]
    assert tree_sha256(ZOO_DIR / entry["file"]) == entry["sha256"] == tree_sha256(zoo_path(name))
    if entry["kind"] == "bc":
        side = Path(f"{ZOO_DIR / entry['file']}.sha256").read_text().split()[0]
        assert side == entry["sha256"]


@pytest.mark.parametrize("name", BC)
def test_bc_zoo_policies_act_on_their_task(name: str) -> None:
    from simjudge.tasks.spec import make_task_env

    policy = make_policy(f"zoo:{name}")
    assert policy.info.name == f"zoo:{name}" and policy.info.spec == f"zoo:{name}"
    env = make_task_env(ENTRIES[name]["task"])
    try:
        obs, _ = env.reset(seed=0)
        base = env.unwrapped
        from simjudge.policies.observe import observe

        action = np.asarray(policy.act(observe(base, obs, policy.info, "")))
    finally:
        env.close()
    assert action.shape == (7,) and np.all(np.abs(action) <= 1.0)


def test_unknown_zoo_name_lists_the_zoo() -> None:
    with pytest.raises(PolicyError, match="no zoo policy 'nope'; the zoo has .*bc-mlp-PressButton-10"):
        make_policy("zoo:nope")


def test_a_zoo_policy_round_trips_through_openpi_client() -> None:
    openpi = pytest.importorskip("openpi_client.websocket_client_policy",
                                 reason="pip install --no-deps openpi-client (the real peer)")
    from simjudge.policies.server import PolicyServer

    local = make_policy("zoo:bc-mlp-PressButton-10")
    server = PolicyServer(make_policy("zoo:bc-mlp-PressButton-10"), port=0).start()
    try:
        client = openpi.WebsocketClientPolicy("127.0.0.1", server.port)
        meta = client.get_server_metadata()
        assert meta["policy"]["name"] == "zoo:bc-mlp-PressButton-10"
        from simjudge.tasks.spec import make_task_env

        env = make_task_env("PressButton-v0")
        try:
            states = [env.reset(seed=seed)[0] for seed in (0, 1, 2)]
        finally:
            env.close()
        for state in states:
            reply = client.infer({"observation/state": state, "prompt": "press"})
            expected = local.act({"state": state, "prompt": "press"})
            np.testing.assert_allclose(np.asarray(reply["actions"]).reshape(7), expected, rtol=1e-6, atol=1e-7)
    finally:
        server.stop()


def test_policies_list_shows_the_zoo_with_provenance() -> None:
    done = subprocess.run([sys.executable, "-m", "simjudge", "policies", "list"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout
    for form in ("bc:PATH.npz", "zoo:NAME", "lerobot:PATH"):
        assert form in out
    assert "zoo:bc-mlp-PressButton-10" in out and "simjudge policies train-bc --demos runs/demos/oracle" in out
    entry = ENTRIES["bc-mlp-PressButton-10"]
    assert f"sha256 {entry['sha256'][:12]}" in out and f"over {entry['measured']['seeds']} seeds" in out


def test_a_zoo_policy_served_runs_as_it_does_in_process() -> None:
    from simjudge.policies import run_episode
    from simjudge.policies.server import PolicyServer
    from simjudge.tasks.spec import make_task_env

    server = PolicyServer(make_policy("zoo:bc-mlp-CloseDoor-3"), port=0).start()
    env = make_task_env("CloseDoor-v0")
    try:
        remote = make_policy(f"remote:{server.url}")  # checks the served metadata (image size too)
        served = run_episode(env, remote, seed=3)
        remote.close()
        local = run_episode(env, make_policy("zoo:bc-mlp-CloseDoor-3"), seed=3)
    finally:
        env.close()
        server.stop()
    assert served.steps == local.steps and served.success == local.success
    np.testing.assert_allclose(served.progress, local.progress)


def test_learned_specs_are_checked_before_an_audit_starts(tmp_path: Path) -> None:
    from simjudge.policies.registry import check_policy_spec

    check_policy_spec("zoo:bc-mlp-PressButton-10")  # nothing loaded: the name and its SHA-256
    for spec, words in (("zoo:nope", "no zoo policy 'nope'"), ("zoo:", "needs its argument"),
                        (f"bc:{tmp_path / 'x.npz'}", "train-bc"), (f"lerobot:{tmp_path}", "no config.json")):
        with pytest.raises(PolicyError, match=words):
            check_policy_spec(spec)
