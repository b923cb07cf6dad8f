"""Result files of the benchmarks: ``results/<name>.json`` with what a number needs beside it.

Every bench that states a target writes its numbers through :func:`write_result`, which adds
the commit, the machine (CPU model, cores), the load average before and after, the Python
and package versions and the time. The docs' performance page is generated from these files
(``python bench/performance_page.py``), so no number in the docs is typed by hand.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "results"


def commit() -> str:
    """The checkout's commit (with ``-dirty`` when files differ from it)."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT, text=True,
                              capture_output=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=ROOT, text=True, capture_output=True).stdout.strip()
        return head + ("-dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def machine() -> dict[str, Any]:
    """CPU model, core count and platform."""
    model = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"cpu": model, "cores": os.cpu_count(), "platform": platform.platform(),
            "python": platform.python_version()}


def load() -> list[float]:
    """The 1, 5 and 15 minute load averages."""
    return [round(x, 2) for x in os.getloadavg()]


def write_result(name: str, numbers: dict[str, Any], settings: dict[str, Any],
                 load_before: list[float], out: Path | None = None) -> Path:
    """Write ``results/<name>.json`` (or ``out``) and return its path."""
    path = out or RESULTS / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {"bench": name, "commit": commit(), "machine": machine(),
               "load_before": load_before, "load_after": load(),
               "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
               "settings": settings, "numbers": numbers}
    path.write_text(json.dumps(payload, indent=2) + "\n")
    return path
