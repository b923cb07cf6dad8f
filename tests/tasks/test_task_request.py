"""``TaskRequest.resolve``: what the user gives (description, object) wins over a built-in name."""

from __future__ import annotations

import logging

import pytest

from simjudge.pipelines.proposer import TaskRequest
from simjudge.tasks.spec import TaskSpecError, load_task


def test_builtin_name_alone_is_the_builtin_task():
    request = TaskRequest.resolve("Open Drawer")
    spec = load_task("OpenDrawer-v0")
    assert request.builtin is spec
    assert (request.description, request.asset, request.note) == (spec.description, spec.asset, "")


def test_builtin_name_with_its_own_description_or_object_is_still_the_builtin():
    spec = load_task("OpenLaptop-v0")
    assert TaskRequest.resolve("Open Laptop", f"  {spec.description.upper()} ").builtin is spec
    assert TaskRequest.resolve("OpenLaptop-v0", asset=spec.asset).builtin is spec
    assert TaskRequest.resolve("Open Laptop", asset="Laptop").builtin is spec  # category = instance 0


def test_builtin_name_with_a_new_description_uses_the_description(caplog):
    with caplog.at_level(logging.WARNING, logger="simjudge.pipelines.proposer"):
        request = TaskRequest.resolve("Open Drawer", "Pull the top drawer out halfway.")
    assert request.builtin is None  # neither the built-in's scene nor its reference goal
    assert request.description == "Pull the top drawer out halfway."
    assert request.asset == load_task("OpenDrawer-v0").asset
    assert "OpenDrawer-v0" in request.note and "description" in request.note
    assert request.note in caplog.text


def test_builtin_name_with_a_new_object_uses_the_object():
    request = TaskRequest.resolve("OpenDrawer-v0", "Open the lid of the box.", asset="Box-2")
    assert request.builtin is None
    assert (request.name, request.asset, request.object_name) == ("Open Drawer", "Box-2", "Box")
    assert request.description == "Open the lid of the box."
    assert request.tree is not None and request.tree.asset_id == "Box-2"
    assert "object Box-2" in request.note and "description" in request.note
    only_object = TaskRequest.resolve("Open Drawer", asset="StorageFurniture-3")
    assert only_object.builtin is None and only_object.asset == "StorageFurniture-3"
    assert only_object.description == "Open Drawer"  # not the built-in's (other object)


def test_a_category_picks_instance_0():
    request = TaskRequest.resolve("Tilt the screen back", asset="Laptop")
    assert (request.asset, request.object_name, request.builtin) == ("Laptop-0", "Laptop", None)
    assert TaskRequest.resolve("Tilt the screen back", asset="laptop").asset == "Laptop-0"


@pytest.mark.parametrize(
    ("asset", "suggested"),
    [("Lapto", "Laptop"), ("Laptop-9", "Laptop"), ("Drawer", "StorageFurniture")],
)
def test_an_unknown_object_lists_close_matches(asset, suggested):
    with pytest.raises(TaskSpecError) as info:
        TaskRequest.resolve("Open it", asset=asset)
    text = str(info.value)
    assert f"unknown object {asset!r}" in text
    assert "did you mean" in text and suggested in text.split("?")[0]
    assert "category" in text


def test_a_new_task_still_needs_an_object():
    with pytest.raises(TaskSpecError, match="--object"):
        TaskRequest.resolve("Wiggle The Thing")
