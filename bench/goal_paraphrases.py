"""Paraphrases written by the local LLM *from* typed goals, for reading them back.

For each development item of the goal-reading set whose goal the rule reader reads right
(the typed goal then provably means what the item's probes say), the LLM is shown that
typed goal in words (its card, joint names replaced by what the parts are and where they
sit) and asked to write the task as a person would. The paraphrase becomes an item of the
``paraphrases`` split with the original item's probes: a reader reading it back must give a
goal with the same ``holds`` / ``start_ok`` on every probe, or refuse
(``python bench/goal_reading.py --split paraphrases``).

The LLM never sees the probes, the expected outcome or the original description. Every
exchange goes through the replay cache (``tests/fixtures/goal_reading/llm_cache``), so the
file is rebuilt offline byte for byte with ``--replay``. Resumable: items already in the
output are kept.

    python bench/goal_paraphrases.py --llm llamacpp:qwen2.5-coder-1.5b --n 70
    python bench/goal_paraphrases.py --replay --check     # CI: the file matches the cache
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from goal_reading import FIXTURES, LLM_CACHE, judge, load_items, rule_reader  # noqa: E402

OUT = FIXTURES / "paraphrases.jsonl"
DEFAULT_LLM = "llamacpp:qwen2.5-coder-1.5b"

_SYSTEM = ("You write robot task descriptions. Given the exact goal of a task on one object, "
           "write ONE or TWO plain English sentences a person would say to ask for it. Say "
           "everything the goal says: which part (by what it is and where: left/right, top/"
           "bottom, front/back), how far (fully, halfway, a quarter, 45 degrees, 10 cm, "
           "slightly), parts that must stay where they are, and how the task starts. Never "
           "use joint or link names, numbers of the range or the word 'fraction': say amounts "
           "as people do. Reply with the sentences only.")

_EXAMPLES = (  # written for this prompt; not items of the goal-reading set
    ("Object: a Cabinet.\nGoal:\nthe top drawer (30 cm of travel) must end at ≥ 0.78 of its "
     "range (open; opening), starting from 0.00.", "Pull the top drawer open."),
    ("Object: a Wardrobe.\nGoal:\nAll of these must hold at the end:\n1. the right door (90 "
     "degrees of travel) must end between 0.40 and 0.60 of its range (45 degrees; opening), "
     "starting from 0.00\n2. the left door (90 degrees of travel) must end within 0.10 of where "
     "it started", "Swing the right door open 45 degrees and keep the left door where it is."),
    ("Object: a Box.\nGoal:\nAll of these must hold at the end:\n1. the lid (100 degrees of "
     "travel) must end at ≤ 0.10 of its range (close; closing), starting from 0.70\n2. the lid "
     "(100 degrees of travel) starts between 0.50 and 1.00 of its range",
     "The box lid is standing open. Shut it."),
    ("Object: a Radio.\nGoal:\nthe knob (360 degrees of travel) must end 0.05-0.35 up from its "
     "start of its range (slightly; turning), starting from 0.00.",
     "Give the radio's knob a small turn."),
)


_ORDINAL = ("first", "second", "third", "fourth", "fifth", "sixth")


def _rank(value: float, values: list[float], low: str, high: str) -> str:
    """``bottom``/``top``, ``middle`` or ``second from the bottom`` of ``value`` in ``values``."""
    ranks = sorted(set(round(v, 2) for v in values))
    n, i = len(ranks), ranks.index(round(value, 2))
    if i == 0:
        return low
    if i == n - 1:
        return high
    if n % 2 == 1 and i == n // 2:
        return "middle"
    return (f"{_ORDINAL[i]} from the {low}" if i < n / 2
            else f"{_ORDINAL[n - 1 - i]} from the {high}")


def _where(position: tuple[float, float, float] | None, parts: list[Any]) -> str:
    """Position words of a part among its kind's parts (world frame: +y left, +z up)."""
    placed = [p.position for p in parts if p.position is not None]
    if position is None or len(placed) < 2:
        return ""
    words = []
    zs, ys, xs = [q[2] for q in placed], [q[1] for q in placed], [q[0] for q in placed]
    if max(zs) - min(zs) > 0.05:
        words.append(_rank(position[2], zs, "bottom", "top"))
    if max(ys) - min(ys) > 0.05:
        words.append(_rank(-position[1], [-y for y in ys], "left", "right"))
    if max(xs) - min(xs) > 0.05:
        words.append(_rank(position[0], xs, "front", "back"))
    return " ".join(words)


def goal_in_words(goal: Any, asset: str) -> str:
    """The goal's card with each joint named by its part, its place and its range."""
    from simjudge.tasks.spec.goal_parser import object_parts

    parts = object_parts(asset)
    text = re.sub(r" ?\('[^']*'\)", "", goal.describe())  # not the item's own words
    for p in sorted(parts, key=lambda q: -len(q.joint)):
        where = _where(p.position, [q for q in parts if q.semantic == p.semantic])
        span = (f"{100 * p.span:.0f} cm of travel" if p.joint_type == "prismatic"
                else f"{p.span * 57.29578:.0f} degrees of travel")
        named = (f"{p.semantic} {where}" if "from" in where or "middle" in where
                 else f"{where} {p.semantic}").strip()
        name = f"the {named} ({span})"
        text = re.sub(rf"\b\w+ {p.joint}\b(?: \([^)]*\))?", name, text)
        text = re.sub(rf"\b{p.joint}\b", name, text)
    return (text + "\n(Positions are fractions of each part's travel: 0 = closed / at rest, "
            "1 = fully open.)")


def _sources() -> list[tuple[dict[str, Any], Any]]:
    """Dev items the rule reader reads right, with their goals, round-robin over the classes."""
    by_class: dict[str, list[Any]] = {}
    for item in load_items("dev"):
        if item["expect"] != "goal":
            continue
        goal, _ = rule_reader(item)
        if goal is not None and judge(item, goal)[0] == "right_goal":
            by_class.setdefault(item["class"], []).append((item, goal))
    order = []
    while any(by_class.values()):
        for cls in sorted(by_class):
            if by_class[cls]:
                order.append(by_class[cls].pop(0))
    return order


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--llm", default=DEFAULT_LLM)
    parser.add_argument("--n", type=int, default=70, help="paraphrases to write")
    parser.add_argument("--replay", action="store_true", help="cache only (no model)")
    parser.add_argument("--check", action="store_true",
                        help="rebuild in memory and compare with the committed file")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)

    from simjudge.llm import make_client

    client = make_client(args.llm, cache_dir=str(LLM_CACHE),
                         mode="replay" if args.replay or args.check else "auto")
    done: dict[str, dict[str, Any]] = {}
    if args.out.exists() and not args.check:
        for line in args.out.read_text().splitlines():
            if line.strip():
                row = json.loads(line)
                done[row["source"]] = row
    order = _sources()
    rows = []
    for i, (item, goal) in enumerate(order[: args.n]):
        if item["id"] in done:
            rows.append(done[item["id"]])
            continue
        words = goal_in_words(goal, item["object"])
        from simjudge.tasks.spec.goal_parser import _entry_for

        tree, _ = _entry_for(item["object"])
        category = tree.category if tree is not None else item["object"]
        messages = [{"role": "system", "content": _SYSTEM}]
        for ask, answer in _EXAMPLES:
            messages += [{"role": "user", "content": ask}, {"role": "assistant", "content": answer}]
        messages.append({"role": "user", "content": f"Object: a {category}.\nGoal:\n{words}"})
        text = client.complete(messages, temperature=0.0, max_tokens=120, seed=0).text
        text = " ".join(text.strip().strip('"').split())
        row = {"id": f"para-{i:03d}", "source": item["id"], "class": item["class"],
               "object": item["object"], "task": item["task"], "description": text,
               "expect": "goal", "probes": item["probes"],
               "meaning": f"paraphrase of {item['id']}: {item['meaning']}"}
        rows.append(row)
        print(f"[{i + 1}/{min(args.n, len(order))}] {item['id']}: {text}", flush=True)
        if not args.check:
            with args.out.open("a") as fh:
                fh.write(json.dumps(row) + "\n")
    if args.check:
        committed = [json.loads(x) for x in args.out.read_text().splitlines() if x.strip()]
        if committed != rows:
            print("paraphrases.jsonl differs from what the replay cache rebuilds")
            return 1
        print(f"{len(rows)} paraphrases rebuilt from the cache, identical")
        return 0
    text = "".join(json.dumps(r) + "\n" for r in rows)
    args.out.write_text(text)  # in the round-robin order, whatever order they were written
    print(f"{len(rows)} paraphrases in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
