"""How well a goal reader turns task words into a verifiable goal: precision and coverage.

Runs a reader over the goal-reading set (``tests/fixtures/goal_reading``: one asset, a task
name and a description per item, the expected outcome ``goal`` or ``refuse``, and probe
states for ``goal`` items) and evaluates each derived goal on the item's probes through the
same path as ``simjudge goal --evaluate``. A derived goal is *right* when every probe's
``holds`` and ``start_ok`` match; a goal on a ``refuse`` item is wrong.

- precision = right goals / goals given (how far a derived goal can be trusted)
- coverage  = right goals / derivable items (items that expect a goal)

per class and overall, for the rule reader and, when the embedded model is installed, the
LLM reader and ``both`` (a goal only when the two agree). The last lines are
``<reader> precision: P coverage: C``. Numbers and settings go to
``results/goal_reading.json`` (per split; a run of one split keeps the others' numbers).

The held-out split is printed as aggregate numbers only: run it once, at the end, after the
last change to the reader.

    python bench/goal_reading.py                    # dev
    python bench/goal_reading.py --show             # dev, with every wrong item and why
    python bench/goal_reading.py --split heldout    # once, at the end
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from simjudge.pipelines.goal_report import evaluations
from simjudge.tasks.spec import derive_goal

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "goal_reading"
RESULTS = ROOT / "results" / "goal_reading.json"
SPLITS = {"dev": ("dev",), "heldout": ("heldout",), "all": ("dev", "heldout"),
          "paraphrases": ("paraphrases",)}
LLM_CACHE = FIXTURES / "llm_cache"


def load_items(split: str) -> list[dict[str, Any]]:
    """The items of a split, in file order."""
    items = []
    for name in SPLITS[split]:
        with (FIXTURES / f"{name}.jsonl").open() as fh:
            items += [json.loads(line) for line in fh if line.strip()]
    return items


def rule_reader(item: dict[str, Any]) -> tuple[Any, str]:
    """The rule reader's goal (or None) and its reason."""
    d = derive_goal(item["task"], item["description"], item["object"])
    return d.goal, "; ".join(d.ambiguities or d.reasons)


def judge(item: dict[str, Any], goal: Any) -> tuple[str, str]:
    """``(outcome, detail)``: outcome ``right_goal``, ``wrong_goal``, ``refused`` or ``error``."""
    if goal is None:
        return "refused", ""
    if item["expect"] != "goal":
        return "wrong_goal", "a goal on an item that expects refuse"
    try:
        got = evaluations(goal, item["probes"], item["object"])
    except ValueError as exc:
        return "wrong_goal", f"cannot evaluate: {exc}"
    bad = [i for i, (g, p) in enumerate(zip(got, item["probes"], strict=True))
           if g["holds"] != p["holds"] or g["start_ok"] != p["start_ok"]]
    if bad:
        shown = ", ".join(f"probe {i}: got {got[i]} want holds={item['probes'][i]['holds']} "
                          f"start_ok={item['probes'][i]['start_ok']}" for i in bad)
        return "wrong_goal", shown
    return "right_goal", ""


def _rates(rows: list[dict[str, Any]]) -> dict[str, Any]:
    given = sum(r["outcome"] in ("right_goal", "wrong_goal") for r in rows)
    right = sum(r["outcome"] == "right_goal" for r in rows)
    derivable = sum(r["expect"] == "goal" for r in rows)
    refuse_items = [r for r in rows if r["expect"] == "refuse"]
    return {"items": len(rows), "goals_given": given, "right_goals": right,
            "derivable": derivable,
            "precision": round(right / given, 4) if given else None,
            "coverage": round(right / derivable, 4) if derivable else None,
            "refuse_items_refused": sum(r["outcome"] == "refused" for r in refuse_items),
            "refuse_items": len(refuse_items)}


def score(items: list[dict[str, Any]], reader: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Per-class and overall rates of a reader, and one row per item."""
    rows = []
    for item in items:
        try:
            goal, reason = reader(item)
        except Exception as exc:  # noqa: BLE001 - a crash gives no goal; it is shown
            goal, reason = None, f"reader error: {type(exc).__name__}: {exc}"
        outcome, detail = judge(item, goal)
        if reason.startswith("reader error"):
            outcome = "error"
        rows.append({"id": item["id"], "class": item["class"], "expect": item["expect"],
                     "outcome": outcome, "detail": detail, "reason": reason,
                     "goal": goal.describe() if goal is not None else None})
    by_class: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_class[row["class"]].append(row)
    numbers = {"classes": {c: _rates(r) for c, r in sorted(by_class.items())},
               "overall": _rates(rows)}
    return numbers, rows


def llm_available() -> str | None:
    """None when the embedded model and runtime are installed, else why not."""
    try:
        from simjudge.llm.models import ensure_model

        ensure_model("qwen2.5-coder-1.5b")
        import llama_cpp  # noqa: F401
    except Exception as exc:  # noqa: BLE001 - any failure means: not run, and why
        return f"{type(exc).__name__}: {str(exc).splitlines()[0][:120]}"
    return None


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def _save(split: str, numbers: dict[str, Any], settings: dict[str, Any]) -> None:
    data = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    data.setdefault("splits", {})[split] = {"commit": _commit(), "settings": settings, **numbers}
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")


def _review() -> dict[str, Any]:
    """The hand review of the paraphrases (``paraphrases_review.json``): faithful or not."""
    path = FIXTURES / "paraphrases_review.json"
    return json.loads(path.read_text())["items"] if path.exists() else {}


def llm_readers(spec: str, k: int, cache: str | None, mode: str | None
                ) -> tuple[Any, Any]:
    """The ``llm`` and ``both`` readers over one :class:`LLMGoalReader` (each item read once)."""
    from simjudge.llm import make_client
    from simjudge.pipelines.goal_llm import LLMGoalReader, read_goal

    reader = LLMGoalReader(make_client(spec, cache_dir=cache, mode=mode), k=k)
    memo: dict[str, Any] = {}

    class _Once:  # the LLM's derivation of an item, computed once for llm and both
        def derive(self, name: str, description: str, asset: str, object_name: Any = None):
            key = f"{name}\n{description}\n{asset}"
            if key not in memo:
                memo[key] = reader.derive(name, description, asset, object_name)
            return memo[key]

    once = _Once()

    def llm(item: dict[str, Any]) -> tuple[Any, str]:
        d = once.derive(item["task"], item["description"], item["object"])
        return d.goal, "; ".join(d.ambiguities or d.reasons)

    def both(item: dict[str, Any]) -> tuple[Any, str]:
        d = read_goal("both", item["task"], item["description"], item["object"],
                      llm=once)  # type: ignore[arg-type]
        return d.goal, "; ".join(d.ambiguities or d.reasons)

    return llm, both


def _table(name: str, numbers: dict[str, Any]) -> None:
    print(f"reader {name}")
    print(f"{'class':22} {'items':>5} {'given':>5} {'right':>5} {'deriv':>5} "
          f"{'precision':>9} {'coverage':>8}")
    for cls, r in [*numbers["classes"].items(), ("overall", numbers["overall"])]:
        print(f"{cls:22} {r['items']:5d} {r['goals_given']:5d} {r['right_goals']:5d} "
              f"{r['derivable']:5d} {_fmt(r['precision']):>9} {_fmt(r['coverage']):>8}")


def main(argv: list[str] | None = None) -> int:
    """Run the bench; print the tables and the last three ``<reader> ...`` lines."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--split", choices=sorted(SPLITS), default="dev")
    parser.add_argument("--show", action="store_true",
                        help="print every item a reader got wrong (not for the held-out split)")
    parser.add_argument("--no-save", action="store_true", help="do not write the results file")
    parser.add_argument("--llm", default=None,
                        help="run the llm and both readers with this model "
                             "(llamacpp:qwen2.5-coder-1.5b, openai:MODEL)")
    parser.add_argument("--k", type=int, default=3, help="samples of the LLM reader")
    parser.add_argument("--cache", default=str(LLM_CACHE),
                        help="replay cache of the LLM exchanges (committed)")
    parser.add_argument("--replay", action="store_true",
                        help="serve every exchange from the cache (no model; a miss fails)")
    parser.add_argument("--limit", type=int, default=None,
                        help="first N items only (a slice; not saved)")
    args = parser.parse_args(argv)
    if args.show and args.split == "heldout":
        parser.error("--show prints items: not for the held-out split (its items stay out "
                     "of sight)")
    items = load_items(args.split)[: args.limit]
    readers: dict[str, Any] = {"rule": rule_reader}
    missing = None
    if args.llm:
        missing = None if args.replay else llm_available()
        if missing is None:
            readers["llm"], readers["both"] = llm_readers(
                args.llm, args.k, args.cache, "replay" if args.replay else "auto")
    print(f"split {args.split}: {len(items)} items; readers {', '.join(readers)}")
    results: dict[str, Any] = {}
    review = _review() if args.split == "paraphrases" else {}
    for name, reader in readers.items():
        numbers, rows = score(items, reader)
        if review:  # the paraphrases the hand review found faithful, apart
            kept = [r for r in rows if review.get(r["id"], {}).get("faithful")]
            numbers["faithful"] = _rates(kept)
            numbers["unfaithful_items"] = len(rows) - len(kept)
        results[name] = numbers
        _table(name, numbers)
        if review:
            f = numbers["faithful"]
            print(f"{'faithful only':22} {f['items']:5d} {f['goals_given']:5d} "
                  f"{f['right_goals']:5d} {f['derivable']:5d} {_fmt(f['precision']):>9} "
                  f"{_fmt(f['coverage']):>8}")
        if args.show:
            for row in rows:
                wrong = row["outcome"] in ("wrong_goal", "error") or (
                    row["outcome"] == "refused" and row["expect"] == "goal")
                if wrong:
                    print(f"\n{row['id']} [{row['outcome']}] {row['detail']}\n  goal: "
                          f"{row['goal']}\n  reason: {row['reason'][:400]}")
    settings = {"readers": list(readers), "llm": args.llm if "llm" in readers else None,
                "k": args.k if "llm" in readers else None, "items": len(items)}
    if missing:
        settings["llm_missing"] = missing
    if not args.no_save and args.limit is None:
        _save(args.split, {r: results.get(r) for r in ("rule", "llm", "both")}, settings)
    for name in ("rule", "llm", "both"):
        if name in results:
            o = results[name]["overall"]
            print(f"{name} precision: {_fmt(o['precision'])} coverage: {_fmt(o['coverage'])}")
        else:
            why = (f"no model: {missing}" if missing else "no --llm given")
            print(f"{name} not run ({why})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
