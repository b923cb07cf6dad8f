"""Run the docstring examples of the LLM and pool modules (they use offline clients only)."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "simjudge.llm.base",
    "simjudge.llm.replay",
    "simjudge.llm.log",
    "simjudge.llm.factory",
    "simjudge.pipelines.pool",
    "simjudge.pipelines.pool_seed",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), verbose=False)
    assert result.attempted > 0 and result.failed == 0
