"""docs/performance.md is the page bench/performance_page.py makes from results/*.json."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_performance_page_is_generated_from_the_result_files():
    spec = importlib.util.spec_from_file_location("performance_page",
                                                  ROOT / "bench" / "performance_page.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert (ROOT / "docs" / "performance.md").read_text() == module.render(), (
        "docs/performance.md is out of date: run `python bench/performance_page.py`")
