"""What share of the shipped generated code the cost proof bounds (runs in-process).

Groups (each item compiled with :func:`simjudge.envs.codegen.compile_reward` against
``STATE_API`` in the default ``"in-process"`` mode, which runs only proven code here):

- ``exemplars``: the exemplar solutions under ``tasks/exemplars`` (an exemplar counts as
  provable when every one of its reward subtasks is);
- ``solutions``: the reference solutions (``tasks/library/solutions`` and
  ``tasks/library/composed/solutions``), counted the same way;
- ``robogen``: every reward of the RoboGen task folders under ``tests/fixtures/robogen``
  (or ``--robogen DIR``, e.g. RoboGen's ``example_tasks``), converted with simjudge's own
  converter (``import_robogen``), one item per reward;
- ``primitive_blocks``: every primitive subtask of all of the above, compiled with
  :func:`~simjudge.envs.codegen.compile_primitive_block` (an unproven block runs in the
  worker, its primitives answered here).

Prints one line per group, ``<group>: provable k/n``, then the reasons of the unproven
items, and writes ``results/provable_share.json`` (commit, settings, counts, items).
Nothing is timed: the numbers do not depend on the machine's load.

    python bench/provable_share.py [--robogen DIR] [--out results/provable_share.json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def _verdict(code: str) -> dict[str, Any]:
    from simjudge.envs.codegen import GeneratedCodeError, compile_reward
    from simjudge.envs.state_api import STATE_API

    try:
        compiled = compile_reward(code, STATE_API)
    except GeneratedCodeError as exc:
        return {"provable": False, "runs_in": None, "reason": f"does not compile: {exc}"}
    compiled.close()
    return {"provable": compiled.runs_in == "in-process", "runs_in": compiled.runs_in,
            "cost_class": compiled.cost_class, "reason": compiled.reason}


def _block_verdict(item: str, code: str) -> dict[str, Any]:
    from simjudge.envs.codegen import GeneratedCodeError, compile_primitive_block
    from simjudge.envs.state_api import STATE_API

    try:
        block = compile_primitive_block(code, STATE_API)
    except GeneratedCodeError as exc:
        return {"item": item, "provable": False, "reasons": [f"does not compile: {exc}"]}
    block.close()
    proven = block.runs_in == "in-process"
    return {"item": item, "provable": proven, "reasons": [] if proven else [block.reason]}


def _block_items(paths: list[Path], robogen: Path) -> list[dict[str, Any]]:
    from simjudge.pipelines.robogen import import_robogen
    from simjudge.tasks.spec import load_solution

    solutions = [(_shown(p), load_solution(p)) for p in paths]
    for task in sorted(p for p in robogen.iterdir() if p.is_dir()):
        try:
            solutions.append((task.name, import_robogen(task)[0]))
        except Exception:  # noqa: BLE001 - reported by the robogen group
            continue
    return [_block_verdict(f"{name}/{s.name}", s.code) for name, solution in solutions
            for s in solution.subtasks if s.kind == "primitive"]


def _shown(path: Path) -> str:
    """``path`` relative to the repository when it is inside it."""
    path = path.resolve()
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def _solution_items(paths: list[Path]) -> list[dict[str, Any]]:
    from simjudge.tasks.spec import load_solution

    items = []
    for path in paths:
        solution = load_solution(path)
        rewards = [_verdict(s.code) for s in solution.subtasks if s.kind == "reward"]
        items.append({
            "item": _shown(path),
            "rewards": len(rewards),
            "provable": all(r["provable"] for r in rewards),
            "reasons": sorted({r["reason"] for r in rewards if not r["provable"]}),
        })
    return items


def _robogen_items(folder: Path) -> list[dict[str, Any]]:
    from simjudge.pipelines.robogen import import_robogen

    items = []
    for task in sorted(p for p in folder.iterdir() if p.is_dir()):
        try:
            solution, _ = import_robogen(task)
        except Exception as exc:  # noqa: BLE001 - a folder that does not convert is reported
            items.append({"item": task.name, "provable": False,
                          "reasons": [f"not converted: {type(exc).__name__}: {exc}"]})
            continue
        for subtask in solution.subtasks:
            if subtask.kind == "reward":
                verdict = _verdict(subtask.code)
                items.append({"item": f"{task.name}/{subtask.name}",
                              "provable": verdict["provable"],
                              "reasons": [] if verdict["provable"] else [verdict["reason"]]})
    return items


def main(argv: list[str] | None = None) -> int:
    """Count, print and write the shares."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--robogen", type=Path, default=ROOT / "tests" / "fixtures" / "robogen")
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "provable_share.json")
    args = parser.parse_args(argv)
    if not args.robogen.is_dir():
        parser.error(f"--robogen {args.robogen} is not a folder of RoboGen task folders")
    library = ROOT / "tasks" / "library"
    exemplars = sorted((ROOT / "tasks" / "exemplars").glob("*.yaml"))
    solutions = (sorted((library / "solutions").glob("*.yaml"))
                 + sorted((library / "composed" / "solutions").glob("*.yaml")))
    groups = {
        "exemplars": _solution_items(exemplars),
        "solutions": _solution_items(solutions),
        "robogen": _robogen_items(args.robogen),
        "primitive_blocks": _block_items(exemplars + solutions, args.robogen),
    }
    counts = {}
    for name, items in groups.items():
        k = sum(1 for i in items if i["provable"])
        counts[name] = {"provable": k, "total": len(items)}
        print(f"{name}: provable {k}/{len(items)}")
    for name, items in groups.items():
        for item in items:
            for reason in item["reasons"]:
                print(f"  unproven {name} {item['item']}: {reason}")
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True, check=False).stdout.strip()
    from simjudge.envs.codegen.costtypes import MAX_ELEMENTS
    from simjudge.envs.codegen.prove import MAX_LOOP, MAX_WORK

    report = {
        "commit": commit,
        "settings": {"mode": "in-process", "api": "STATE_API", "robogen": _shown(args.robogen),
                     "max_work": MAX_WORK, "max_loop": MAX_LOOP, "max_elements": MAX_ELEMENTS},
        "counts": counts,
        "items": groups,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
