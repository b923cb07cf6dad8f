"""Live pulse accuracy of the shipped learned judges on their held-out splits.

Why (issue 38): the learned judges (``obs-progress``, ``image-progress``) were retrained on
randomized episodes labelled with the staged Φ. Their model cards quote accuracy on stored
training-time pairs; this bench measures them the way a user would, with ``simjudge
judge-bench --split …``: fresh randomized rollouts of the held-out split (seeds never used in
training), 300 labelled pulse pairs a third per hop bin, clean and under state noise σ (and
image noise α for the image judge), and the genuine-regression share of the pairs. The
privileged judge is the reference row (it defines the labels, so it scores 1.0 clean).

For each split it runs one judge-bench (``pairs`` section only) and prints one line per
judge and condition::

    heldout-tasks  obs-progress    clean      0.953  (small 0.98 / medium 0.96 / large 0.92)

Writes ``results/learned_judges_pulse.json``: per split, per judge and condition the overall
accuracy (unweighted mean of the bins) and per-bin accuracy; the pairs' per-bin counts and
genuine regressions; the sha256 of the weights measured; settings, wall time and load. The
run folders (``--out``/<split>) are resumable (rollouts are cached)::

    python bench/learned_judges_pulse.py --out runs/bench_learned_pulse
    python bench/learned_judges_pulse.py --table   # the guide's table, from the result file
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from results import ROOT, load, write_result  # noqa: E402

WEIGHTS = ROOT / "judges" / "learned" / "weights"
SPLITS: dict[str, tuple[str, ...]] = {
    "heldout-instances": ("privileged", "obs-progress", "image-progress"),
    "heldout-tasks": ("privileged", "obs-progress", "image-progress"),
    # obs-progress saw these categories in training (judge-bench refuses it there)
    "heldout-categories": ("privileged", "image-progress"),
}


def weights_sha256() -> dict[str, str]:
    """The sha256 files shipped beside the learned judges' weights."""
    return {p.name.removesuffix(".sha256"): p.read_text().split()[0]
            for p in sorted(WEIGHTS.glob("*.sha256"))}


def summarize(report: dict[str, Any]) -> dict[str, Any]:
    """Accuracy per judge and condition, and the pairs' counts, from a judge-bench report."""
    judges: dict[str, Any] = {}
    for spec, entry in report["judges"].items():
        rows = entry.get("pairs")
        if not isinstance(rows, dict):
            continue
        judges[spec] = {cond: {"overall": row["overall"], "bins": row["bins"],
                               "invalid": row["invalid"]}
                        for cond, row in rows.items() if isinstance(row, dict)
                        and "overall" in row}
    bins = report["pairs"]["bins"]
    return {"judges": judges,
            "pairs": {"n": report["pairs"]["n"],
                      "genuine_share": report["pairs"]["genuine_share"],
                      "bins": {b: {"n": v["n"], "genuine": v["genuine"]}
                               for b, v in bins.items()}},
            "rollouts": {k: report["rollouts"][k] for k in ("episodes", "tasks", "failed")}}


def line(split: str, judge: str, cond: str, row: dict[str, Any]) -> str:
    """One printed result line."""
    def fmt(x: float | None) -> str:
        return "  n/a" if x is None else f"{x:.3f}"

    bins = " / ".join(f"{b} {fmt(v)}" for b, v in row["bins"].items())
    return f"{split:<19} {judge:<15} {cond:<12} {fmt(row['overall'])}  ({bins})"


def table(result: dict[str, Any]) -> str:
    """Markdown table of a result file (the judges guide shows it; a test keeps them equal)."""
    rows = ["| split | judge | condition | overall | small | medium | large |",
            "|---|---|---|---|---|---|---|"]
    for split, entry in result["numbers"]["splits"].items():
        for judge, conds in entry["judges"].items():
            if judge == "privileged":
                continue  # it defines the labels
            for cond, row in conds.items():
                cells = [row["overall"], *row["bins"].values()]
                rows.append(f"| {split} | `{judge}` | {cond} | "
                            + " | ".join("n/a" if c is None else f"{c:.3f}" for c in cells)
                            + " |")
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--splits", default=",".join(SPLITS))
    parser.add_argument("--pairs", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--image-variants", action="store_true",
                        help="also the occlusion / viewpoint / invariance rows (slower)")
    parser.add_argument("--out", default="runs/bench_learned_pulse")
    parser.add_argument("--result", default=None, help="result file (default results/…)")
    parser.add_argument("--table", action="store_true",
                        help="print the markdown table of the result file and stop")
    args = parser.parse_args()
    if args.table:
        import json

        source = Path(args.result) if args.result else ROOT / "results" / "learned_judges_pulse.json"
        print(table(json.loads(source.read_text())))
        return

    from simjudge.pipelines.judge_bench import JudgeBenchConfig, run_judge_bench

    splits = [s for s in args.splits.split(",") if s]
    unknown = sorted(set(splits) - set(SPLITS))
    if unknown:
        parser.error(f"unknown split(s) {unknown}; use a comma list of {list(SPLITS)}")
    before = load()
    start = time.perf_counter()
    # flat "<split> <judge> <condition>": accuracy keys (the performance page shows them),
    # the per-bin detail under "splits"
    numbers: dict[str, Any] = {"splits": {}, "weights_sha256": weights_sha256()}
    for split in splits:
        tick = time.perf_counter()
        config = JudgeBenchConfig(judges=SPLITS[split], sections=("pairs",), split=split,
                                  pairs=args.pairs, seed=args.seed, workers=args.workers,
                                  out=str(Path(args.out) / split),
                                  image_variants=args.image_variants)
        report = run_judge_bench(config)
        entry = summarize(report)
        entry["seconds"] = time.perf_counter() - tick
        entry["load"] = load()
        numbers["splits"][split] = entry
        for judge, rows in entry["judges"].items():
            for cond, row in rows.items():
                print(line(split, judge, cond, row), flush=True)
                overall = row["overall"]
                numbers[f"{split} {judge} {cond}"] = None if overall is None else round(overall, 3)
        print(f"{split}: pairs per bin {entry['pairs']['bins']}; "
              f"{entry['seconds']:.0f} s, load {entry['load']}", flush=True)
    numbers["wall_s"] = time.perf_counter() - start
    settings = {"splits": splits, "pairs": args.pairs, "seed": args.seed,
                "workers": args.workers, "image_variants": args.image_variants,
                "judges": {s: list(SPLITS[s]) for s in splits}}
    path = write_result("learned_judges_pulse", numbers, settings, before,
                        out=Path(args.result) if args.result else None)
    print(f"wrote {path} ({numbers['wall_s']:.0f} s, load before {before}, after {load()})")


if __name__ == "__main__":
    main()
