"""``make repro-replay``: re-score and replay every claim offline; fail loudly on any difference.

For each claim with a committed ``results/<claim>.json``:

1. **re-score**: the claim's ``score()`` recomputes every number from the committed per-item
   results (``repro/items/<claim>/``) and must equal the result file on ``paper``,
   ``simjudge``, ``n``, ``ci95``, ``verified``, ``reproduced`` and ``details`` exactly;
2. **replay**: the claim's ``replay()`` re-runs stored items — the simulator for real, every
   LLM exchange from the committed cache ``repro/replay/<claim>/`` in ``replay`` mode (a miss
   raises instead of calling a model) — and each re-run item must equal the stored one.

``--slice`` replays only a few items per claim (:data:`SLICE`; CI, under ~2 min); without it
every item is replayed. Finally ``docs/reproduction.md`` must be what ``repro/page.py``
makes from the result files.

Usage: ``python -m repro.check [--slice] [--claims robobench,eqarm]``; exit status 1 on any
difference, with every difference listed.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time

from .common import CLAIMS, RESULTS, compare_scored, env_threads, load_claim

__all__ = ["SLICE", "check_claim", "main"]

SLICE: dict[str, int] = {"robobench": 1, "roboarena": 3, "eqarm": 2}
"""Items replayed per claim with ``--slice``."""


def check_claim(claim: str, limit: int | None) -> list[str]:
    """Differences of one claim (empty: it reproduces its committed numbers)."""
    module = importlib.import_module(CLAIMS[claim])
    diffs = compare_scored(load_claim(claim), module.score(), f"{claim}: ")
    return diffs + list(module.replay(limit))


def main(argv: list[str] | None = None) -> int:
    """Command line; returns the exit status."""
    from .page import PAGE, render

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--slice", action="store_true", help="replay a few items per claim")
    parser.add_argument("--claims", default=",".join(CLAIMS))
    args = parser.parse_args(argv)
    env_threads()
    failed: list[str] = []
    for claim in args.claims.split(","):
        if claim not in CLAIMS:
            parser.error(f"unknown claim {claim!r}; use a comma list of {list(CLAIMS)}")
        if not (RESULTS / f"{claim}.json").is_file():
            print(f"{claim}: no committed result (results/{claim}.json); skipped")
            continue
        start = time.perf_counter()
        diffs = check_claim(claim, SLICE[claim] if args.slice else None)
        status = "reproduced exactly" if not diffs else f"{len(diffs)} DIFFERENCES"
        print(f"{claim}: {status} ({time.perf_counter() - start:.0f} s)", flush=True)
        for line in diffs[:40]:
            print(f"  {line}")
        failed += diffs
    if PAGE.read_text(encoding="utf-8") != render():
        failed.append("docs/reproduction.md is out of date: run python -m repro.page")
        print(failed[-1])
    if failed:
        print(f"make repro-replay FAILED: {len(failed)} difference(s) from the committed numbers",
              file=sys.stderr)
        return 1
    print("make repro-replay: every committed claim reproduced from its replay cache and items")
    return 0


if __name__ == "__main__":
    sys.exit(main())
