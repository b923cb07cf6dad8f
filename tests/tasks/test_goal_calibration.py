"""The plain verbs' thresholds are the medians of RoboGen's stated ones, and the docs say so."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

from simjudge.tasks.spec import derive_goal
from simjudge.tasks.spec.goal_amounts import CLOSED, PLAIN_DEFAULT, PLAIN_OPEN

ROOT = Path(__file__).resolve().parents[2]
ROWS = json.loads((ROOT / "tests" / "fixtures" / "robogen_thresholds.json").read_text())["rows"]


def test_plain_thresholds_are_the_per_part_medians_of_robogens_stated_thresholds():
    opens: dict[str, list[float]] = {}
    for row in ROWS:
        if row["direction"] == "open":
            opens.setdefault(row["part"], []).append(row["threshold"])
    assert {p: statistics.median(v) for p, v in opens.items()} == {
        p: PLAIN_OPEN[p] for p in opens}
    assert set(PLAIN_OPEN) == set(opens)  # no threshold without evidence; others: the default
    assert PLAIN_DEFAULT == 0.9
    assert statistics.median(r["threshold"] for r in ROWS if r["direction"] == "close") == CLOSED


def test_a_lid_at_36_percent_is_not_open_and_the_docs_show_every_row():
    lid = derive_goal("Open Laptop", "Open the laptop.", "Laptop-0").goal.targets[0]
    assert not lid.contains(0.363) and lid.contains(0.95)
    page = (ROOT / "docs" / "goals.md").read_text()
    for row in ROWS:
        assert f"`{row['substep']}`" in page
