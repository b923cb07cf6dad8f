"""The zoo's SB3 policies (issue 41): train PPO / SAC at graded budgets, audit them, record them.

For each (task, budget, algorithm) of ``--specs`` this trains ``<algo>-<Task>-<N>k.zip`` with
``simjudge policies train-sb3`` (skipped when the file exists: pass ``--retrain``), adds its
entry to ``simjudge/policies/zoo_weights/zoo.json`` (file, SHA-256, the training card as
provenance), then measures every SB3 entry of a task the way the BC entries were measured:

    simjudge audit --policy oracle=oracle --policy NAME=zoo:NAME ... --tasks TASK --seeds 30
        --videos 0 --no-report --workers 1 --out runs/zoo_audit_sb3/TASK

and writes each entry's ``measured`` (verified success k/n with the Wilson 95 % interval, MP,
mean steps, the command) from the audit's ``audit.json``. One training process at a time,
torch one thread. Prints one line per policy:

    ppo-CloseDoor-10k CloseDoor-v0 success 0.933 (28/30) MP 96.1 trained 29.1 s

    python bench/zoo_sb3.py [--specs CloseDoor-v0:2000,CloseDoor-v0:10000:sac,...] [--seeds 30]
        [--seed 0] [--retrain] [--audit-only]
"""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
ZOO = ROOT / "simjudge" / "policies" / "zoo_weights"
SPECS = ("CloseDoor-v0:2000,CloseDoor-v0:10000,CloseDoor-v0:50000,"
         "CloseDrawer-v0:2000,CloseDrawer-v0:10000,CloseDrawer-v0:50000,"
         "PressDispenser-v0:2000,PressDispenser-v0:10000,PressDispenser-v0:50000,"
         "PressButton-v0:10000,PressButton-v0:30000,PressButton-v0:80000,"
         "CloseDoor-v0:10000:sac")
"""The shipped grid: PPO at 2k / 10k / 50k env steps (PressButton, which learns later: 10k / 30k /
80k), SAC at 10k on CloseDoor (about 40 env steps/s here, a gradient step per env step; its
checkpoint is 3.5 MB: SAC at 3k, 0/30 and MP 15, is not shipped)."""


def zoo_name(task: str, budget: int, algo: str = "ppo") -> str:
    """``ppo-CloseDoor-10k`` for (``CloseDoor-v0``, 10000)."""
    size = f"{budget // 1000}k" if budget % 1000 == 0 else str(budget)
    return f"{algo}-{task.removesuffix('-v0')}-{size}"


def _load_index() -> dict[str, Any]:
    return dict(json.loads((ZOO / "zoo.json").read_text()))


def _save_index(index: dict[str, Any]) -> None:
    path = ZOO / "zoo.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(index, indent=1) + "\n")
    tmp.replace(path)


def entry_for(name: str, weights: Path) -> dict[str, Any]:
    """The zoo.json entry of a ``train-sb3`` checkpoint (``measured`` filled in later)."""
    from simjudge.policies.bc import file_sha256
    from simjudge.policies.train_sb3 import read_card

    card = read_card(weights)
    if not card:
        raise SystemExit(f"{weights} carries no training card; train it with simjudge policies train-sb3")
    prov = {k: v for k, v in card.items() if k != "task"}
    return {"file": weights.name, "kind": "sb3", "network": "mlp", "algo": card["algo"],
            "task": card["task"], "sha256": file_sha256(weights), "provenance": prov}


def measured_from_audit(audit: dict[str, Any], policy: str, task: str, command: str) -> dict[str, Any]:
    """An entry's ``measured`` from ``audit.json`` (the primary judge's table)."""
    table = audit["tables"][audit["primary_judge"]][task][policy]
    success = table["success"]
    return {"success": round(success["k"] / success["n"], 3), "k": int(success["k"]),
            "seeds": int(success["n"]), "interval95": [round(success["lo"] / 100, 3),
                                                       round(success["hi"] / 100, 3)],
            "mp": table["all"]["MP"], "steps_mean": table["steps_mean"], "command": command}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--specs", default=SPECS, help="TASK:BUDGET[:ALGO],... to train and record")
    parser.add_argument("--seeds", type=int, default=30, help="held-out audit seeds (0 .. n-1)")
    parser.add_argument("--seed", type=int, default=0, help="training seed")
    parser.add_argument("--retrain", action="store_true", help="retrain existing checkpoints")
    parser.add_argument("--audit-only", action="store_true", help="only re-measure the SB3 entries")
    parser.add_argument("--work", default="runs/zoo_audit_sb3", help="audit folders (relative to the checkout)")
    args = parser.parse_args(argv)
    specs = [(s.split(":")[0], int(s.split(":")[1]), (s.split(":") + ["ppo"])[2])
             for s in args.specs.split(",") if s]
    index = _load_index()
    for task, budget, algo in specs if not args.audit_only else []:
        name = zoo_name(task, budget, algo)
        weights = ZOO / f"{name}.zip"
        if args.retrain or not weights.exists():
            cmd = ["simjudge", "policies", "train-sb3", "--task", task, "--algo", algo, "--steps",
                   str(budget), "--seed", str(args.seed), "--out", f"simjudge/policies/zoo_weights/{name}.zip"]
            subprocess.run([sys.executable, "-m", *cmd], cwd=ROOT, check=True)
        index["policies"][name] = {**entry_for(name, weights),
                                   "measured": index["policies"].get(name, {}).get("measured", {})}
        _save_index(index)
    tasks = sorted({task for task, _, _ in specs})
    for task in tasks:
        names = [n for n, e in index["policies"].items() if e["kind"] == "sb3" and e["task"] == task]
        if not names:
            continue
        out = f"{args.work}/{task}"
        cmd = ["simjudge", "audit", "--policy", "oracle=oracle",
               *[a for n in names for a in ("--policy", f"{n}=zoo:{n}")],
               "--tasks", task, "--seeds", str(args.seeds), "--videos", "0", "--no-report",
               "--workers", "1", "--out", out]
        shutil.rmtree(ROOT / out, ignore_errors=True)  # a fresh measurement each time
        done = subprocess.run([sys.executable, "-m", *cmd], cwd=ROOT, capture_output=True, text=True)
        if done.returncode:
            raise SystemExit(f"{shlex.join(cmd)} failed:\n{done.stderr[-3000:]}")
        audit = json.loads((ROOT / out / "audit.json").read_text())
        for name in names:
            entry = index["policies"][name]
            entry["measured"] = measured_from_audit(audit, name, task, shlex.join(cmd))
            m, prov = entry["measured"], entry["provenance"]
            print(f"{name} {task} success {m['success']:.3f} ({m['k']}/{m['seeds']}) MP {m['mp']:.1f} "
                  f"trained {prov['seconds']} s")
        _save_index(index)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
