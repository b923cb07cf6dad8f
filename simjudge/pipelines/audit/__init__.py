"""simjudge.pipelines.audit: ``simjudge audit``, policies × tasks × seeds, judged densely.

* :mod:`~simjudge.pipelines.audit.run`: :func:`run_audit` (snapshots, ε calibration,
  episodes on the executor, ``audit.json``, ``report.html``), :func:`rescore_audit`
  (other judges on stored episodes, no policy re-run), :func:`summarize_run`.
* :mod:`~simjudge.pipelines.audit.jobs`: the independent jobs.
* :mod:`~simjudge.pipelines.audit.summary`: OPD tables ×100 with MC@k and bootstrap CIs,
  Wilson intervals, failure fingerprints, reachability curves.
* :mod:`~simjudge.pipelines.audit.config`: :class:`AuditConfig`, :class:`AuditRescoreConfig`,
  :class:`ServeConfig`.
"""

from __future__ import annotations

from .config import AuditConfig, AuditRescoreConfig, ServeConfig
from .run import AUDIT_FILE, parse_policy_args, rescore_audit, run_audit, summarize_run
from .summary import METRICS, bootstrap_ci, reachability, summarize_audit

__all__ = [
    "AUDIT_FILE",
    "METRICS",
    "AuditConfig",
    "AuditRescoreConfig",
    "ServeConfig",
    "bootstrap_ci",
    "parse_policy_args",
    "reachability",
    "rescore_audit",
    "run_audit",
    "summarize_audit",
    "summarize_run",
]
