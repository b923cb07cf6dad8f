"""An audit of composed tasks discriminates the oracle from a degraded oracle."""

from __future__ import annotations

import pytest

from simjudge.pipelines.audit import AuditConfig, run_audit

pytestmark = pytest.mark.timeout(300)

TASKS = ("PutCubeInDrawer-v0", "StartMicrowaveWithDoorOpen-v0")


def test_oracle_vs_early_release_on_composed_tasks(tmp_path):
    config = AuditConfig(
        policy=("oracle=oracle", "early=oracle-early-release:at=0.2"), tasks=(",".join(TASKS),),
        seeds=1, judge=("privileged",), out=str(tmp_path), executor="serial", videos=0,
        bootstrap=50, report=False,
    )
    audit = run_audit(config, progress=False)
    assert audit["episodes"] == 4 and not audit["failed_jobs"]
    table = audit["tables"]["privileged"]
    for task in TASKS:
        oracle, early = table[task]["oracle"], table[task]["early"]
        assert oracle["success"]["rate"] == 100.0 and early["success"]["rate"] == 0.0
        assert oracle["all"]["MC"] > early["all"]["MC"]  # milestone completion tells them apart
