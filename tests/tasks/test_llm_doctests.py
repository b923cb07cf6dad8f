"""Run the docstring examples of the LLM and pool modules (they use offline clients only)."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "simjudge.tasks.llm.base",
    "simjudge.tasks.llm.replay",
    "simjudge.tasks.llm.log",
    "simjudge.tasks.llm.factory",
    "simjudge.tasks.pool",
    "simjudge.tasks.pool_seed",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), verbose=False)
    assert result.attempted > 0 and result.failed == 0
