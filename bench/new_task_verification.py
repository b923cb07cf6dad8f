"""Verified success on task descriptions nobody tuned for, against hand-written expectations.

Each task below is a name + description on a catalogue asset (not a built-in task), with
the goal a person reading it expects, written by hand as intervals of joint-range
fractions (0 = closed / lower limit). ``acquire --proposer template`` runs on each (rule
verifier, MPC on the generated reward); the bench then reads the executed candidate's
final joint fractions from ``summary.json`` and checks the hand-written expectation
independently of simjudge's own goal parser. It reports:

- agreement: simjudge's ``verified_success`` equals "the hand-written goal holds on the
  final state" (target: ≥ 11 of 12);
- trivial starts: tasks whose hand-written goal already held at the start and were still
  reported as successes (target: 0);
- claimed vs verified success, and which tasks had no derivable goal (skipped, not run).

    python bench/new_task_verification.py --out runs/new_tasks     # ~1-3 min per task
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from simjudge.pipelines.acquire import acquire
from simjudge.pipelines.components import make_execute_fn, make_proposer
from simjudge.pipelines.proposer import TaskRequest
from simjudge.pipelines.verifiers import make_verifier

# (asset, name, description, {joint: (low, high)}): the hand-written expectation
TASKS: list[tuple[str, str, str, dict[str, tuple[float, float]]]] = [
    ("StorageFurniture-0", "Open the top drawer halfway", "Pull the upper drawer out about half "
     "way.", {"joint_2": (0.3, 0.7)}),
    ("StorageFurniture-0", "Shut the bottom drawer", "Push the lower drawer closed.",
     {"joint_0": (0.0, 0.15)}),
    ("Microwave-0", "Open the microwave door fully", "Swing the microwave door all the way "
     "open.", {"joint_0": (0.9, 1.0)}),
    ("Oven-0", "Turn the left knob", "Turn the oven's left knob.", {"joint_2": (0.15, 1.0)}),
    ("Refrigerator-0", "Open both fridge doors", "Open both doors of the refrigerator.",
     {"joint_0": (0.4, 1.0), "joint_2": (0.4, 1.0)}),
    ("Safe-0", "Turn the safe dial a quarter", "Rotate the dial of the safe by a quarter of its "
     "range.", {"joint_1": (0.1, 0.4)}),
    ("Box-0", "Open the box lid slightly", "Lift the lid of the box a little.",
     {"joint_0": (0.05, 0.4)}),
    ("Kettle-0", "Close the kettle lid", "Put the kettle's lid down.", {"joint_0": (0.0, 0.15)}),
    ("Laptop-0", "Open the laptop halfway", "Raise the laptop screen halfway.",
     {"joint_0": (0.3, 0.7)}),
    ("Window-0", "Open the window a crack", "Slide the window open a crack.",
     {"joint_0": (0.05, 0.4)}),
    ("Door-0", "Push the door shut", "Close the door.", {"joint_0": (0.0, 0.15)}),
    ("FoldingChair-0", "Unfold the chair fully", "Unfold the folding chair all the way.",
     {"joint_0": (0.9, 1.0)}),
    ("Faucet-0", "Turn the faucet handle a bit", "Turn the faucet's handle slightly.",
     {"joint_0": (0.05, 0.4)}),
    ("TrashCan-0", "Open the trash can lid", "Lift the trash can's lid open.",
     {"joint_0": (0.4, 1.0)}),
]


def _holds(joints: dict, expected: dict[str, tuple[float, float]]) -> bool:
    for joint, (low, high) in expected.items():
        matches = [v for k, v in joints.items() if k.endswith(f"/{joint}")]
        if not matches:
            return False
        fraction = matches[0]["fraction"]
        if not (low - 1e-6 <= fraction <= high + 1e-6):
            return False
    return True


def main() -> None:
    """Run every task and print the agreement table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("runs/new_tasks"))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rows = []
    for asset, name, description, expected in TASKS:
        request = TaskRequest.resolve(name, description, asset)
        started = time.time()
        if request.goal is None:
            rows.append({"task": name, "asset": asset, "skipped": request.goal_derivation.ambiguities})
            print(f"{name:34s} SKIPPED (no goal): {request.goal_derivation.ambiguities}", flush=True)
            continue
        execute = make_execute_fn("mpc", seed=args.seed, video=False,
                                  goals={request.name: request.goal})
        result = acquire(request, make_proposer("template", args.out), execute,
                         args.out / asset / name.replace(" ", "_"), candidates=2,
                         score=make_verifier("rule"), verifier_name="rule", seed=args.seed,
                         resume=True, progress=False)
        summary = json.loads((result.out / "summary.json").read_text())
        cand = next(c for c in summary["candidates"] if c["executed"])
        hand = _holds(cand["final_joints"], expected)
        trivial = _holds(cand["initial_joints"], expected)
        row = {"task": name, "asset": asset, "verdict": cand["verdict"],
               "claimed": cand["claimed_success"], "verified": cand["verified_success"],
               "hand_expected_holds": hand, "hand_holds_at_start": trivial,
               "agree": bool(cand["verified_success"]) == hand,
               "goal": request.goal.describe(), "seconds": round(time.time() - started, 1)}
        rows.append(row)
        print(f"{name:34s} {cand['verdict']:22s} claimed={cand['claimed_success']!s:5s} "
              f"verified={cand['verified_success']!s:5s} hand={hand!s:5s} "
              f"agree={row['agree']} ({row['seconds']} s)", flush=True)
    ran = [r for r in rows if "skipped" not in r]
    agree = sum(r["agree"] for r in ran)
    trivial_successes = [r["task"] for r in ran if r["hand_holds_at_start"] and r["verified"]]
    print(f"\nagreement: {agree} / {len(ran)} run ({len(rows) - len(ran)} skipped: no goal)")
    print(f"verified: {sum(bool(r['verified']) for r in ran)}, claimed: "
          f"{sum(bool(r['claimed']) for r in ran)}, successes on a trivial start: "
          f"{len(trivial_successes)} {trivial_successes}")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "new_task_verification.json").write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
