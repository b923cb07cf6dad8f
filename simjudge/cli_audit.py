"""Policy audit commands: ``audit`` (and ``audit rescore``), ``serve``, ``policies``.

Thin like :mod:`simjudge.cli`: a config in (:mod:`simjudge.pipelines.audit.config`), one
library call out.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from simjudge.cli_configs import Command
from simjudge.pipelines.audit.config import AuditConfig, AuditRescoreConfig, ServeConfig

__all__ = ["AUDIT_COMMANDS", "AUDIT_GROUPS", "PoliciesListConfig"]


@dataclass(frozen=True, kw_only=True)
class PoliciesListConfig:
    """List the registered policies and the other policy spec forms.

    Attributes:
        json: Print JSON instead of a table.
    """

    json: bool = False


def _audit(config: AuditConfig) -> int:
    from simjudge.pipelines.audit import rescore_audit, run_audit

    if config.action not in ("run", "rescore"):
        raise ValueError(f"unknown audit action {config.action!r}: use `simjudge audit --policy "
                         "NAME=SPEC ... --out RUN` or `simjudge audit rescore RUN --judge SPEC`")
    if config.action == "rescore":
        if not config.run:
            raise ValueError("usage: simjudge audit rescore RUN --judge SPEC [--judge SPEC ...]")
        rescore = AuditRescoreConfig(run=config.run, judge=config.judge, executor=config.executor,
                                     workers=config.workers, ray_address=config.ray_address)
        audit = rescore_audit(rescore)
        out = Path(config.run)
    else:
        audit = run_audit(config)
        out = Path(str(config.out))
    primary = audit["primary_judge"]
    for task in audit["tasks"]:
        print(f"\n{task} (judge {primary}; OPD ×100)")
        print(f"{'policy':<22}{'success %':>10}{'MC':>7}{'MP':>7}{'PPL':>7}{'CRA':>7}{'STR':>7}"
              f"{'MC@100':>8}")
        for policy, cell in audit["tables"][primary][task].items():
            t = cell["all"] or {}
            row = "".join(f"{t.get(k, float('nan')):>7.1f}" for k in ("MC", "MP", "PPL", "CRA", "STR"))
            print(f"{policy:<22}{cell['success']['rate']:>10.1f}{row}{t.get('MC@100', float('nan')):>8.1f}")
        warning = audit.get("worlds", {}).get(task, {}).get("warning")
        if warning:
            print(f"warning: {warning}")
    failed = audit["failed_jobs"]
    print(f"\n{audit['episodes']} episodes, {len(failed)} failed; wrote {out / 'audit.json'}"
          + (f" and {out / 'report.html'}" if (out / "report.html").exists() else ""))
    meta = out / "run_meta.json"  # rescore: the audit's own (a run's videos are its run's)
    skipped = json.loads(meta.read_text()).get("video_skipped") if meta.exists() else None
    if skipped:
        print(f"  videos skipped: {skipped}")
    return 0


def _serve(config: ServeConfig) -> int:
    from simjudge.policies import make_policy
    from simjudge.policies.server import PolicyServer, check_bind
    from simjudge.policies.wire_limits import check_frame_mb, redact_secrets

    check_bind(config.host, config.port, config.api_key, config.insecure)  # before any work
    check_frame_mb(config.max_frame_mb)
    server = PolicyServer(make_policy(config.policy), host=config.host, port=config.port,
                          api_key=config.api_key, max_frame_mb=config.max_frame_mb,
                          insecure=config.insecure, max_connections=config.max_connections)
    server.start()  # bound (or a clear error) before "serving" is printed
    print(f"serving {redact_secrets(config.policy)} on ws://{config.host}:{server.port} "
          f"(RoboArena/openpi protocol; Ctrl-C stops)", flush=True)
    try:
        server.wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


def _policies(config: PoliciesListConfig) -> int:
    from simjudge.policies import registered_policies
    from simjudge.policies.zoo import zoo_entries

    names = registered_policies()
    forms = {"sb3:PATH.zip": "a stable-baselines3 checkpoint (simjudge policies train-sb3)",
             "bc:PATH.npz": "a behaviour-cloning policy (simjudge policies train-bc)",
             "zoo:NAME": "a policy of the shipped zoo (listed below)",
             "lerobot:PATH": "a LeRobot checkpoint (pretrained_model folder; runs in .venv-lerobot)",
             "module:function": "any importable callable f(obs) -> action (or a Policy class)",
             "remote:ws://HOST:PORT": "a RoboArena/openpi WebSocket policy server",
             "skill:ID[,root=DIR]": "a skill-library skill replayed as joint positions"}
    zoo = zoo_entries()
    if config.json:
        print(json.dumps({"registered": names, "forms": forms, "zoo": zoo}, indent=1))
        return 0
    for name, summary in {**names, **forms}.items():
        print(f"{name:<24}{summary}")
    print("\nzoo (spec zoo:NAME; success: verified, over held-out randomized seeds by simjudge audit)")
    for name, entry in zoo.items():
        measured, prov = entry.get("measured", {}), entry.get("provenance", {})
        rate = measured.get("success")
        data = (f"{prov.get('algo')} {prov.get('env_steps')} env steps on the {prov.get('reward_mode')} "
                f"{prov.get('judge')} reward" if entry.get("kind") == "sb3"
                else f"{prov.get('episodes')} demos / {prov.get('frames')} frames")
        print(f"  zoo:{name:<28}{entry['task']:<19}success "
              f"{'?' if rate is None else f'{rate:.2f}'} over {measured.get('seeds', '?')} seeds; "
              f"{data}, seed {prov.get('seed')}, "
              f"{prov.get('seconds')} s to train, sha256 {entry['sha256'][:12]}")
        print(f"      {prov.get('command')}")
    return 0


AUDIT_GROUPS: dict[tuple[str, ...], str] = {("policies",): "policies audits and the arena can run"}
"""Command groups of the audit commands."""

AUDIT_COMMANDS: dict[tuple[str, ...], Command] = {
    ("audit",): Command(AuditConfig, _audit),
    ("serve",): Command(ServeConfig, _serve),
    ("policies", "list"): Command(PoliciesListConfig, _policies),
}
"""The audit commands: path, config class and handler."""
