"""Run the docstring examples of the judge modules (real task envs, no network)."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "simjudge.judges",
    "simjudge.judges.signals",
    "simjudge.judges.context",
    "simjudge.judges.base",
    "simjudge.judges.code",
    "simjudge.judges.judge_reward",
    "simjudge.judges.judge_verify",
    "simjudge.judges.judge_record",
    "simjudge.judges.predicates",
    "simjudge.judges.milestones",
    "simjudge.judges.privileged",
    "simjudge.judges.rule",
    "simjudge.judges.panel",
    "simjudge.judges.registry",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), verbose=False)
    assert result.attempted > 0 and result.failed == 0
