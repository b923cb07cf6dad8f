"""``simjudge audit``: identical starts, stored episodes, tables, resume, rescore."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import time

import numpy as np
import pytest

from simjudge.judges.episode import EpisodeRecord
from simjudge.pipelines.audit import (
    AuditConfig,
    AuditRescoreConfig,
    bootstrap_ci,
    parse_policy_args,
    reachability,
    rescore_audit,
    run_audit,
    summarize_run,
)
from simjudge.policies import PolicyError

pytestmark = pytest.mark.timeout(300)

POLICIES = ("oracle=oracle", "wrong=oracle-wrong-target", "rnd=random:scale=0.5")


def _config(out, **changes):
    base = dict(policy=POLICIES, tasks=("OpenDrawer-v0",), seeds=2, judge=("privileged",),
                out=str(out), executor="serial", videos=0, bootstrap=200, report=False)
    base.update(changes)
    return AuditConfig(**base)


@pytest.fixture(scope="module")
def audit_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("audit")
    return out, run_audit(_config(out), progress=False)


def test_every_policy_task_seed_is_an_episode_from_the_same_snapshot(audit_run):
    out, audit = audit_run
    assert audit["episodes"] == 6 and not audit["failed_jobs"]
    files = sorted(out.glob("episodes/*/*/*/*/episode_*.json"))
    assert len(files) == 6
    starts = {}
    for path in files:
        record = EpisodeRecord.load(path)
        policy, task, seed = path.parts[-5], path.parts[-4], path.parts[-3]
        assert record.opd is not None and record.outcome["finished"]
        starts.setdefault((task, seed), []).append(json.dumps(record.steps[0].state, sort_keys=True))
        assert record.reset_options["state"]  # the snapshot it started from is recorded
        assert policy in {"oracle", "wrong", "rnd"}
    for states in starts.values():
        assert len(set(states)) == 1  # identical initial states across policies


def test_tables_rank_the_oracle_above_its_failures(audit_run):
    _, audit = audit_run
    rows = audit["tables"]["privileged"]["OpenDrawer-v0"]
    oracle, wrong, rnd = rows["oracle"], rows["wrong"], rows["rnd"]
    assert oracle["success"]["rate"] == 100.0 and wrong["success"]["rate"] == 0.0
    lo, hi = oracle["success"]["lo"], oracle["success"]["hi"]
    assert 0 < lo < 100 and hi == 100.0  # Wilson interval of k/k
    assert oracle["all"]["MP"] == 100.0 and oracle["all"]["MC@100"] == 100.0
    assert wrong["all"]["MP"] < 50 and rnd["all"]["MP"] < 5
    assert set(oracle["all"]["ci"]) >= {"MC", "MP", "PPL", "CRA", "STR", "MC@25"}
    # the deterministic oracle's replays of one world count once (issue 38: distinct worlds)
    distinct = audit["worlds"]["OpenDrawer-v0"]["distinct"]
    assert oracle["success_only"]["n"] == distinct and wrong["success_only"] is None
    prints = audit["fingerprints"]["privileged"]["OpenDrawer-v0"]
    assert prints["oracle"]["failure_type"] == "no failures"
    assert prints["rnd"]["n_failed"] == 2
    curves = audit["reachability"]["OpenDrawer-v0"]
    assert curves["oracle"]["1"][-1] == 1.0 and curves["oracle"]["1"][0] == 0.0
    assert curves["rnd"]["0.25"][-1] == 0.0
    assert audit["epsilon"]["privileged"] >= 1e-3 and audit["frame_rate_hz"] == 50.0
    shares = audit["timing"]
    assert math.isclose(shares["policy_share"] + shares["physics_share"] + shares["judge_share"], 1.0)


def test_resume_runs_nothing_twice_and_recovers_a_killed_episode(audit_run):
    out, _ = audit_run
    results = sorted((out / "results").glob("*.json"))
    stamps = {p.name: p.stat().st_mtime_ns for p in results}
    lost = out / "results" / "rnd__OpenDrawer-v0__s001.json"
    lost.unlink()  # as if the run had been killed during this episode
    audit = run_audit(_config(out, resume=True), progress=False)
    assert audit["episodes"] == 6
    after = {p.name: p.stat().st_mtime_ns for p in (out / "results").glob("*.json")}
    changed = [name for name in after if after[name] != stamps.get(name)]
    assert changed == [lost.name]
    with pytest.raises(Exception, match="differs|different|--resume"):
        run_audit(_config(out, seeds=3, resume=True), progress=False)
    with pytest.raises(Exception, match="--resume"):
        run_audit(_config(out), progress=False)


def test_killed_audit_process_resumes_without_loss_or_repeats(tmp_path):
    out = tmp_path / "run"
    argv = [sys.executable, "-m", "simjudge.cli", "audit", "--policy", "a=oracle-noisy",
            "--policy", "b=random", "--tasks", "OpenDrawer-v0", "--seeds", "6", "--videos", "0",
            "--executor", "serial", "--no-report", "--bootstrap", "50", "--out", str(out)]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while len(list(out.glob("results/*.json"))) < 3 and proc.poll() is None:
        assert time.monotonic() < deadline, "the audit wrote no results"
        time.sleep(0.05)
    proc.kill()  # SIGKILL mid-run: no clean-up runs
    proc.wait(10)
    before = {p.name: p.stat().st_mtime_ns for p in out.glob("results/*.json")}
    assert 3 <= len(before) < 12
    assert subprocess.run([*argv, "--resume"], capture_output=True, timeout=300).returncode == 0
    after = {p.name: p.stat().st_mtime_ns for p in out.glob("results/*.json")}
    assert len(after) == 12 and all(after[k] == v for k, v in before.items())
    audit = json.loads((out / "audit.json").read_text())
    assert audit["episodes"] == 12 and not audit["failed_jobs"]


def test_rescore_replays_stored_episodes_with_another_judge(audit_run):
    out, _ = audit_run
    audit = rescore_audit(AuditRescoreConfig(run=str(out), judge=("noisy:sigma=0.05,seed=1",),
                                             executor="serial"), progress=False)
    judge = "noisy:sigma=0.05,seed=1"
    assert audit["judges"] == ["privileged", judge]
    rescored = [json.loads(p.read_text()) for p in (out / "rescore").glob("*/*.json")]
    assert len(rescored) == 6 and all(r["replay_exact"] for r in rescored)
    assert audit["epsilon"][judge] > audit["epsilon"]["privileged"]  # calibrated: it is noisy
    noisy = audit["tables"][judge]["OpenDrawer-v0"]["oracle"]["all"]["MP"]
    assert 90.0 <= noisy <= 100.0
    assert len(list(out.glob("episodes/*/*/*/noisy_sigma_0.05_seed_1/episode_*.json"))) == 6
    again = summarize_run(out, report=False)
    assert again["tables"][judge] == audit["tables"][judge]


def test_a_served_policy_audits_like_the_same_policy_run_locally(tmp_path):
    from simjudge.policies import make_policy
    from simjudge.policies.server import PolicyServer

    with PolicyServer(make_policy("random:scale=0.5"), port=0) as server:
        audit = run_audit(_config(tmp_path, policy=(f"far=remote:{server.url}",
                                                     "near=random:scale=0.5"), horizon=25),
                          progress=False)
    rows = audit["tables"]["privileged"]["OpenDrawer-v0"]
    assert rows["far"]["all"] == rows["near"]["all"] and rows["far"]["all"]["n"] == 2
    far = json.loads((tmp_path / "results" / "far__OpenDrawer-v0__s000.json").read_text())
    assert len(far["timing"]["latencies_ms"]) == 25 and far["timing"]["reconnects"] == 0
    assert far["policy_info"]["metadata"]["server"]["policy"]["name"] == "random"


def test_policy_arguments_and_statistics():
    assert parse_policy_args(["a=oracle", "remote:ws://127.0.0.1:9000"]) == {
        "a": "oracle", "remote": "remote:ws://127.0.0.1:9000"}
    with pytest.raises(PolicyError, match="twice"):
        parse_policy_args(["a=oracle", "a=random"])
    with pytest.raises(PolicyError, match="at least one"):
        parse_policy_args([])
    with pytest.raises(PolicyError, match="Did you mean 'oracle-delay'"):
        run_audit(AuditConfig(policy=("oracle-dely",), tasks=("OpenDrawer-v0",), out="/tmp/x"),
                  progress=False)
    with pytest.raises(PolicyError, match="takes no parameter"):
        run_audit(AuditConfig(policy=("random:sigma=2",), tasks=("OpenDrawer-v0",), out="/tmp/x"),
                  progress=False)
    with pytest.raises(PolicyError, match="unknown task"):
        run_audit(AuditConfig(policy=("zero",), tasks=("NoSuchTask-v0",), out="/tmp/x"), progress=False)
    lo, hi = bootstrap_ci([0.0, 100.0] * 20, 500, np.random.default_rng(0))
    assert 30 < lo < 50 < hi < 70
    curves = reachability([[0.0, 0.3, 1.0], [0.0, 0.6]], horizon=3)
    assert curves["0.25"] == [0.0, 1.0, 1.0, 1.0]
    assert curves["1"] == [0.0, 0.0, 0.5, 0.5] and curves["0.5"] == [0.0, 0.5, 1.0, 1.0]


def test_intervals_count_distinct_worlds_and_replays_are_warned_about(tmp_path, capsys):
    """Why: every seed built the same world, so an audit of a deterministic policy over 3
    seeds was 3 replays of one rollout, and its Wilson interval counted them as 3 trials."""
    import json

    from simjudge.cli import main

    out = tmp_path / "audit"
    assert main(["audit", "--policy", "oracle=oracle", "--policy", "rnd=random", "--tasks",
                 "OpenDrawer-v0", "--seeds", "3", "--horizon", "20", "--no-report",
                 "--out", str(out)]) == 0
    audit = json.loads((out / "audit.json").read_text())
    worlds = audit["worlds"]["OpenDrawer-v0"]
    snapshots = {json.dumps(json.loads(p.read_text())["state"], sort_keys=True)
                 for p in (out / "snapshots").glob("*.json")}
    assert worlds["seeds"] == 3 and worlds["distinct"] == len(snapshots)
    cells = audit["tables"]["privileged"]["OpenDrawer-v0"]
    if len(snapshots) < 3:  # seeds that vary nothing: the deterministic oracle counts once
        assert cells["oracle"]["success"]["n"] == len(snapshots)
        assert "warning" in worlds and "warning:" in capsys.readouterr().out
    assert cells["rnd"]["success"]["n"] == 3  # a random policy's episodes differ: 3 trials
