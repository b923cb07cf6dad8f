"""Precision and recall of the goal check (semantic verifier) on injected and real errors.

Injected: the negatives are solutions whose execution was verified — the hand-written
reference solutions (``tasks/library/solutions``) and the verified exemplars
(``tasks/exemplars``, kept only when execution succeeded) — and the positives are the same
solutions with their success condition weakened (:mod:`simjudge.judges.bench.weaken`:
threshold, direction, joint, amount). A case is flagged when the goal check reports an error.

Real (``--real``): a proposer's candidates (``--proposer template`` or ``local``, the embedded
LLM; ``--seeds`` per task) for the built-in tasks are executed (MPC on their own reward); a
real error is a candidate whose own success held but whose task goal did not
(``claimed_not_verified``), a correct one is ``verified``. Slow: minutes per task.

    python bench/goal_verifier.py                  # injected only, seconds
    python bench/goal_verifier.py --real --out runs/goal_verifier_real
    python bench/goal_verifier.py --real --proposer local --seeds 3 \
        --tasks OpenDrawer-v0,CloseDrawer-v0,OpenDoor-v0 --out runs/goal_verifier_llm
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from simjudge.judges.bench.weaken import WEAKENINGS, weaken
from simjudge.judges.goal_check import goal_intervals, goal_issues
from simjudge.pipelines.proposer import TaskRequest
from simjudge.pipelines.verifiers import judge_context, request_goal
from simjudge.tasks.spec import REFERENCE_SOLUTIONS_DIR, Solution, load_task

EXEMPLARS = Path(__file__).resolve().parent.parent / "tasks" / "exemplars"


def _verified_solutions() -> list[tuple[str, Solution]]:
    found = []
    for folder in (REFERENCE_SOLUTIONS_DIR, EXEMPLARS):
        for path in sorted(folder.glob("*.yaml")):
            found.append((path.stem, Solution.from_yaml(path)))
    return found


def _flagged(subtasks, goal, context) -> bool:
    return any(i.severity == "error" for i in goal_issues(subtasks, goal, context))


def injected() -> dict:
    """Flag rates on verified solutions (negatives) and their weakenings (positives)."""
    rows, counts = [], Counter()
    for env_id, solution in _verified_solutions():
        spec = load_task(env_id)
        request = TaskRequest.from_spec(spec)
        goal, context = request_goal(request), judge_context(request, solution)
        subtasks = [(s.kind, s.code) for s in solution.subtasks]
        flagged = _flagged(subtasks, goal, context)
        counts["FP" if flagged else "TN"] += 1
        rows.append({"task": env_id, "case": "verified", "flagged": flagged})
        joints, _ = goal_intervals(goal)
        for target in joints:
            movable = context.joints.get(target.object, ())
            for how in WEAKENINGS:
                weak = weaken(subtasks, how, target.object, target.joint, movable)
                if weak is None:
                    continue
                hit = _flagged(weak, goal, context)
                counts["TP" if hit else "FN"] += 1
                rows.append({"task": env_id, "case": how, "flagged": hit})
    return {"counts": dict(counts), **_rates(counts), "rows": rows}


def real(out: Path, seeds: int, proposer_name: str = "template",
         tasks: list[str] | None = None) -> dict:
    """Flags vs execution verdicts of real candidates (template or LLM) on built-in tasks."""
    from simjudge.pipelines.components import make_execute_fn, make_proposer
    from simjudge.pipelines.dataset import execute_checkpointed
    from simjudge.tasks.spec import library_ids

    execute = make_execute_fn("mpc", video=False)
    proposer = make_proposer(proposer_name, out, max_tokens=512)
    rows, counts = [], Counter()
    for env_id in tasks or library_ids():
        request = TaskRequest.from_spec(load_task(env_id))
        try:
            candidates = proposer.propose(request, n=seeds, seed=0)
        except ValueError as exc:  # rigid-object tasks: the template proposer declines
            rows.append({"task": env_id, "skipped": str(exc)})
            continue
        for i, solution in enumerate(candidates):
            run = out / env_id / f"cand_{i}"
            outcome = execute_checkpointed(run / "outcome.json", solution, run / "exec", execute)
            context = judge_context(request, solution)
            flagged = _flagged([(s.kind, s.code) for s in solution.subtasks],
                               request_goal(request), context)
            real_error = outcome.verdict == "claimed_not_verified"
            if outcome.verdict in ("claimed_not_verified", "verified"):
                counts[("TP" if flagged else "FN") if real_error else
                       ("FP" if flagged else "TN")] += 1
            rows.append({"task": env_id, "candidate": i, "verdict": outcome.verdict,
                         "flagged": flagged})
            print(f"{env_id:26s} cand {i} {outcome.verdict:22s} flagged={flagged}", flush=True)
    return {"counts": dict(counts), **_rates(counts), "rows": rows}


def _rates(counts: Counter) -> dict:
    tp, fp, fn = counts["TP"], counts["FP"], counts["FN"]
    return {"precision": tp / (tp + fp) if tp + fp else None,
            "recall": tp / (tp + fn) if tp + fn else None}


def main() -> None:
    """Print the injected (and optionally real) precision/recall table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--real", action="store_true", help="also execute template candidates")
    parser.add_argument("--seeds", type=int, default=1, help="candidates per task")
    parser.add_argument("--proposer", default="template", help="template, local, openai")
    parser.add_argument("--tasks", default="", help="comma-separated built-in ids (default all)")
    parser.add_argument("--out", type=Path, default=Path("runs/goal_verifier"))
    args = parser.parse_args()
    result = {"injected": injected()}
    by_case = Counter((r["case"], r["flagged"]) for r in result["injected"]["rows"])
    print("injected weakenings (flagged / cases):")
    for case in ("verified", *WEAKENINGS):
        total = by_case[(case, True)] + by_case[(case, False)]
        print(f"  {case:10s} {by_case[(case, True)]:3d} / {total:3d}")
    inj = result["injected"]
    print(f"injected: precision {inj['precision']:.3f} recall {inj['recall']:.3f} {inj['counts']}")
    if args.real:
        tasks = [t for t in args.tasks.split(",") if t] or None
        result["real"] = real(args.out, args.seeds, args.proposer, tasks)
        r = result["real"]
        print(f"real: precision {r['precision']} recall {r['recall']} {r['counts']}")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "goal_verifier.json").write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
