"""Every docstring example in the package runs (Google-style ``Example:`` sections)."""

from __future__ import annotations

import doctest
import importlib

import pytest

from tests.test_errors import package_modules


@pytest.mark.parametrize("name", package_modules())
def test_docstring_examples_run(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
                             report=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"
