"""Write ``docs/reproduction.md`` from the claims' result files (``results/<claim>.json``).

No number on the page is typed by hand: each claim's table rows, notes and provenance come
from its result file; ``make repro-replay`` (``repro/check.py``) and
``tests/repro/test_repro_page.py`` fail when the page is out of date.

Usage: ``python -m repro.page``.
"""

from __future__ import annotations

import json
from typing import Any

from .common import CLAIMS, RESULTS, ROOT

__all__ = ["PAGE", "render"]

PAGE = ROOT / "docs" / "reproduction.md"

_INTRO = """\
# Reproduction

The papers simjudge builds on report headline effects; this page measures them in simjudge, on
the simulator's verified success, with the embedded models. One script per claim
(`repro/<claim>.py`) measures it, records every LLM exchange in a committed replay cache
(`repro/replay/<claim>/`, one JSON per exchange), stores its per-item results
(`repro/items/<claim>/`) and writes `results/<claim>.json` (`paper`, `simjudge`, `n`, `ci95`,
`verified`, `commit`, `settings`, the machine, the load average, versions, wall time). This page
is generated from those files by `python -m repro.page`.

Where simjudge does not reproduce a paper's effect, the row says so and the notes give the most
likely reason. A claim not listed has no committed result yet.
"""

_HOWTO = """\
## How to run

Each script resumes where a killed run stopped (items already stored are skipped; plan-eval and
the arena keep their own run folders under `runs/repro/`), then writes its result file:

```text
python -m repro.robobench --llm local      # plan evaluation, Qwen2.5-Coder-1.5B (make llm)
python -m repro.roboarena --matches 600 --oracle-seeds 10 --workers 1
python -m repro.eqarm --llm local          # llm-episode K = 1..16, SmolLM2-135M
python -m repro.page                       # regenerate this page
```

`--llm` takes `local` (the claim's embedded model), `local:MODEL`, `openai:MODEL` or `replay`
(the committed cache only; a request it does not hold raises instead of calling a model).

**At larger scale**, point the same scripts at an OpenAI-compatible server (vLLM, llama.cpp's
server, a hosted API): `SIMJUDGE_LLM_BASE_URL=http://host:8000/v1 python -m repro.eqarm --llm
openai:MODEL`. The exchanges are cached under the other model's hashes, so they never mix with
the embedded model's. To keep a larger run's items apart from the committed ones, run it in a
copy of the checkout (the item folders are the claims' inputs for `make repro-replay`).
RoboArena takes another zoo as `--policies name=spec,...` and more matches with `--matches`.

## How `make repro-replay` works

`make repro-replay` (`python -m repro.check`) needs no live model. For every claim with a
committed result it (1) re-scores the claim from its stored per-item results and compares every
number of `results/<claim>.json` exactly, and (2) replays stored items — the simulator runs for
real, each LLM exchange is answered from `repro/replay/<claim>/` in replay mode — and compares
each re-run item with the stored one. It also checks that this page is up to date. Any
difference is listed and the command fails. CI runs a slice (`python -m repro.check --slice`:
one RoboBench task, two EQA-RM episodes, three arena matches; every claim is still re-scored in
full).
"""


def _fmt(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.3g}" if abs(value) < 1000 else f"{value:.0f}"
    if isinstance(value, list):
        return "[" + ", ".join(_fmt(v) for v in value) + "]"
    return str(value)


def _section(data: dict[str, Any]) -> list[str]:
    paper, ours = data.get("paper", {}), data.get("simjudge", {})
    n, ci = data.get("n", {}), data.get("ci95", {})
    verified = "yes" if data.get("verified") else "no"
    lines = [f"## {data.get('title', data['claim'])}", "",
             f"Reproduced: **{data.get('reproduced', '?')}**. {data.get('notes', '')}", "",
             "| claim | paper's number | simjudge's | n | interval (95 %) | on verified success? |",
             "|---|---|---|---|---|---|"]
    for key, value in ours.items():
        count = n.get(key) if isinstance(n, dict) else n
        lines.append(f"| `{key}` | {_fmt(paper.get(key))} | {_fmt(value)} | {_fmt(count)} | "
                     f"{_fmt(ci.get(key))} | {verified} |")
    extra = [k for k in paper if k not in ours]
    for key in extra:
        lines.append(f"| `{key}` | {_fmt(paper[key])} | not measured | — | — | — |")
    machine = data.get("machine", {})
    settings = json.dumps(data.get("settings", {}), sort_keys=True)
    lines += ["", f"Command: `{data.get('settings', {}).get('command', '?')}`; commit "
              f"`{data.get('commit')}`, {data.get('time')}; wall time {data.get('wall_s')} s; "
              f"{machine.get('cpu', '?')} ({machine.get('cores')} cores); load average "
              f"{data.get('load_before')} before, {data.get('load_after')} after.", "",
              f"Settings: `{settings}`.", ""]
    if data["claim"] == "roboarena":
        lines += ["![Kendall τ vs comparisons, active vs uniform pair selection]"
                  "(images/arena_active.png)", ""]
    return lines


def render() -> str:
    """The page's text."""
    lines = [_INTRO]
    for claim in CLAIMS:
        path = RESULTS / f"{claim}.json"
        if path.is_file():
            lines += _section(json.loads(path.read_text(encoding="utf-8")))
    lines.append(_HOWTO)
    return "\n".join(lines).rstrip() + "\n"


def main() -> None:
    """Write the page."""
    PAGE.write_text(render(), encoding="utf-8")
    print(f"wrote {PAGE}")


if __name__ == "__main__":
    main()
