"""An audit's seeds are different worlds; --no-randomize makes them one, and says so."""

from __future__ import annotations

import json

import pytest

from simjudge.pipelines.audit import AuditConfig, run_audit

pytestmark = pytest.mark.timeout(300)


def _audit(out, randomize: bool) -> dict:
    config = AuditConfig(policy=("oracle=oracle", "zero=zero"), tasks=("OpenDrawer-v0",), seeds=2,
                         judge=("privileged",), out=str(out), executor="serial", videos=0,
                         bootstrap=20, report=False, horizon=30, randomize=randomize)
    return run_audit(config, progress=False)


def _snapshots(out) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((out / "snapshots").glob("*.json"))]


def test_seeds_are_worlds_unless_no_randomize(tmp_path):
    varied, fixed = tmp_path / "varied", tmp_path / "fixed"
    _audit(varied, True)
    _audit(fixed, False)
    assert json.loads((varied / "config.json").read_text())["randomize"] is True
    assert json.loads((fixed / "config.json").read_text())["randomize"] is False
    one, two = _snapshots(varied)
    assert one["randomize"] and one["world"]["world_seed"] != two["world"]["world_seed"]
    assert one["state"]["bodies"] != two["state"]["bodies"]  # the cabinet stands elsewhere
    a, b = _snapshots(fixed)
    assert a["world"] is None and not a["randomize"]
    assert a["state"]["bodies"] == b["state"]["bodies"]
    episode = next((varied / "episodes" / "oracle").rglob("episode_*.json"))
    record = json.loads(episode.read_text())
    seed = record["seed"]
    assert record["world"] == _snapshots(varied)[seed]["world"]  # the episode ran in its world
