"""VERGSA prefix labels, splits and the dataset files."""

from __future__ import annotations

from simjudge.pipelines.dataset import (
    _Entry,
    label_prefixes,
    split_by_solution,
    split_by_task,
)
from simjudge.pipelines.proposer import TaskRequest
from simjudge.pipelines.template_proposer import TemplateProposer
from simjudge.tasks.spec import Outcome


def _entries():
    request = TaskRequest.resolve("Open Drawer")
    base = TemplateProposer().propose(request, n=2, seed=0)
    completions = TemplateProposer().complete(request, base[0].prefix(1), n=4, seed=9)
    completion = next(c for c in completions if c.subtasks[1:] != base[0].subtasks[1:])
    def outcome(solution, first: bool, rest: bool, task: bool) -> Outcome:
        n = len(solution.subtasks)
        return Outcome((first,) + (rest,) * (n - 1), task)

    assert len(base[0].subtasks) == 2  # grasp, then the reward subtask
    entries = [
        _Entry(base[0], "b0", "base", 0, outcome(base[0], True, False, False)),
        _Entry(completion, "b0", "completion", 1, outcome(completion, True, True, True)),
        _Entry(base[1], "b1", "base", 0, outcome(base[1], False, False, False)),
    ]
    return request, entries


def test_prefix_shared_with_a_success_is_positive():
    request, entries = _entries()
    records = label_prefixes(request, entries)
    by = {(r.base_id, r.origin, r.k): r for r in records}
    # base 0 failed, but its first subtask is shared with a successful completion
    assert by[("b0", "base", 1)].label is True
    assert by[("b0", "base", 2)].label is False
    assert by[("b0", "completion", 2)].label is True
    # label never positive for a failed subtask of a solution nobody completed successfully
    assert not any(r.label for r in records if r.base_id == "b1")
    assert {r.n_subtasks for r in records if r.base_id == "b0"} == {2}


def test_splits_keep_tasks_and_families_apart():
    request, entries = _entries()
    records = label_prefixes(request, entries)
    train, test = split_by_task(records, ["Open Drawer"])
    assert not train and len(test) == len(records)
    train, test = split_by_solution(records, test_fraction=0.5, seed=0)
    assert {r.base_id for r in train}.isdisjoint({r.base_id for r in test})
    assert len(train) + len(test) == len(records)
