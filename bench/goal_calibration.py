"""The plain verbs' thresholds, from the success thresholds RoboGen's example substeps state.

For every substep of RoboGen's example tasks whose success reads ``diff < k * (joint_limit_high
- joint_limit_low)`` with ``diff = abs(<joint> - joint_limit_high)`` (an opening to the upper
limit) or ``- joint_limit_low`` (a closing), the threshold it states as a range fraction is
``1 - k`` (open) or ``k`` (close); a ``diff`` against a variable set to one of the limits
counts as that limit. The part is the first part word of the substep's name
(``open_the_laptop_screen``: a screen). The rows go to
``tests/fixtures/robogen_thresholds.json``; ``tests/tasks/test_goal_calibration.py`` checks
that the reader's plain thresholds (:data:`~simjudge.tasks.spec.goal_amounts.PLAIN_OPEN`,
``CLOSED``) are the per-part medians of these rows, and docs/goals.md shows the table.

RoboGen's repository is not part of simjudge; bring your own checkout:

    python bench/goal_calibration.py PATH/TO/RoboGen/example_tasks
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "robogen_thresholds.json"
PARTS = {"door": "door", "doors": "door", "lid": "lid", "screen": "screen", "drawer": "drawer",
         "window": "window", "seat": "seat", "head": "head", "lever": "handle",
         "handle": "handle", "switch": "handle", "knob": "knob", "button": "button",
         "faucet": "handle", "tap": "handle"}
_SUCCESS = re.compile(r"success\s*=\s*diff\s*<\s*([0-9.]+)\s*\*\s*\(\s*joint_limit_high\s*-\s*"
                      r"joint_limit_low\s*\)")
_DIFF = re.compile(r"diff\s*=\s*np\.abs\(\s*\w+\s*-\s*(joint_limit_high|joint_limit_low|\w+)\s*\)")
_TARGET = r"\b{name}\s*=\s*(joint_limit_high|joint_limit_low)\s*(?:#.*)?$"


def rows(example_tasks: Path) -> list[dict]:
    """One row per substep that states an open/close threshold of a known part."""
    out = []
    for path in sorted(example_tasks.glob("*/task_*/*.py")):
        code = path.read_text()
        success, diff = _SUCCESS.search(code), _DIFF.search(code)
        if success is None or diff is None:
            continue
        words = path.stem.split("_")
        part = next((PARTS[w] for w in words if w in PARTS), None)
        if part is None:
            continue
        limit = diff.group(1)
        if not limit.startswith("joint_limit_"):  # diff = abs(angle - target_joint_angle)
            named = re.search(_TARGET.format(name=re.escape(limit)), code, re.M)
            if named is None:
                continue  # a target between the limits: not a plain verb
            limit = named.group(1)
        k = float(success.group(1))
        direction = "open" if limit == "joint_limit_high" else "close"
        out.append({"task": path.parent.parent.name, "substep": path.stem, "part": part,
                    "direction": direction,
                    "threshold": round(1 - k if direction == "open" else k, 4)})
    return out


def medians(table: list[dict]) -> tuple[dict[str, float], float]:
    """Per-part median of the open thresholds, and the median close threshold."""
    opens: dict[str, list[float]] = {}
    for row in table:
        if row["direction"] == "open":
            opens.setdefault(row["part"], []).append(row["threshold"])
    closes = [r["threshold"] for r in table if r["direction"] == "close"]
    return ({p: statistics.median(v) for p, v in sorted(opens.items())},
            statistics.median(closes))


def main(argv: list[str] | None = None) -> int:
    """Write the fixture and print the per-part medians."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("example_tasks", type=Path)
    args = parser.parse_args(argv)
    table = rows(args.example_tasks)
    FIXTURE.write_text(json.dumps({"source": "RoboGen example_tasks substeps",
                                   "rows": table}, indent=1) + "\n")
    opens, close = medians(table)
    print(f"{len(table)} substeps; open medians {opens}; close median {close}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
