"""Tasks proposed from an object, run as a stream; scenes repaired to start undone."""

from __future__ import annotations

import json

import pytest

from simjudge.envs.catalogue import default_catalogue
from simjudge.llm import ScriptedClient
from simjudge.pipelines.acquire_stream import acquire_stream
from simjudge.pipelines.components import make_execute_fn, make_proposer, repair_start
from simjudge.pipelines.proposer import TaskRequest
from simjudge.pipelines.task_proposals import (
    load_task_proposals,
    propose_tasks,
    save_task_proposals,
)
from simjudge.pipelines.template_proposer import TemplateProposer


def test_template_tasks_cover_every_category_and_report_what_they_cannot_derive():
    categories = sorted({e.category for e in default_catalogue().entries() if e.tree})
    proposals = [p for c in categories for p in propose_tasks(c)]
    assert {p.asset.split("-")[0] for p in proposals} == set(categories)
    derived = [p for p in proposals if p.goal is not None]
    assert len(derived) >= 0.85 * len(proposals)
    # issue 37: a plain "turn the knob" names no amount and no end state, so the reader
    # refuses it (it used to read a lax default); besides the panel's identical buttons,
    # those are the only proposals without a goal
    for p in proposals:
        if p.goal is None and not p.asset.startswith("ButtonPanel"):
            assert "names no amount and no end state" in p.ambiguities[0], p.ambiguities
    for p in proposals:
        assert (p.goal is None) == bool(p.ambiguities)  # no goal ⇔ the reason is given
    panel = [p for p in proposals if p.asset.startswith("ButtonPanel")]
    assert panel and all(p.goal is None for p in panel)  # four identical buttons: ambiguous
    drawers = {p.name for p in proposals if p.asset == "StorageFurniture-0"}
    assert {"Open the top drawer", "Close the bottom drawer"} <= drawers


def test_task_files_round_trip(tmp_path):
    path = save_task_proposals(tmp_path / "t.yaml", propose_tasks("Microwave-0", n=2))
    entries = load_task_proposals(path)
    assert [e["object"] for e in entries] == ["Microwave-0", "Microwave-0"]
    bad = tmp_path / "bad.yaml"
    bad.write_text("tasks:\n- name: Open it\n")
    with pytest.raises(ValueError, match=r"tasks\[0\] needs 'name' and 'object'"):
        load_task_proposals(bad)


def test_llm_task_proposals_are_schema_checked_and_get_parsed_goals():
    reply = json.dumps({"tasks": [
        {"name": "Open the oven door", "description": "Pull the oven door open."},
        {"name": "Polish the oven", "description": "Make it shine."}]})
    found = propose_tasks("Oven-0", n=2, client=ScriptedClient([reply]))
    assert [p.source for p in found] == ["scripted:scripted"] * 2
    assert found[0].goal is not None and found[1].goal is None and found[1].ambiguities


def test_a_close_task_scene_is_repaired_to_start_open():
    request = TaskRequest.resolve("Close the drawer", "Close the top drawer.",
                                  "StorageFurniture-0")
    goal = request.goal
    assert goal is not None
    solution = TemplateProposer().propose(request, n=1)[0]
    key = next(iter(goal.implied_initial_joints()))
    unset = solution.model_copy(update={"scene": solution.scene.model_copy(update={
        "objects": tuple(o.model_copy(update={"joint_init": {}}) for o in solution.scene.objects)
    })})
    repaired = repair_start(unset, goal)
    start = dict(repaired.scene.objects[0].joint_init)[key[1]]
    assert start >= 0.85 and repaired.provenance["scene_repairs"]
    assert repair_start(repaired, goal) is repaired  # nothing left to repair


def test_a_stream_runs_derivable_tasks_and_skips_the_rest(tmp_path):
    entries = [{"name": "Open the top drawer", "description": "", "object": "StorageFurniture-0"},
               {"name": "Press the panel button", "description": "", "object": "ButtonPanel-0"}]
    rows = acquire_stream(
        entries, make_proposer("template", tmp_path),
        lambda request: make_execute_fn("oracle", video=False, goals={request.name: request.goal}),
        tmp_path / "stream", candidates=1, progress=False,
    )
    assert [r["status"] for r in rows] == ["run", "skipped"]
    assert rows[0]["verified"] is not None and "button" in rows[1]["why"]
    summary = json.loads((tmp_path / "stream" / "stream_summary.json").read_text())
    assert summary["run"] == 1 and summary["skipped"] == 1
    task_summary = tmp_path / "stream" / rows[0]["folder"] / "summary.json"
    assert json.loads(task_summary.read_text())["candidates"][0]["verified_success"] is not None
