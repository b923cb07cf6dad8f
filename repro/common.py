"""The shared layer of the reproduction scripts: result files, item stores, LLM clients, intervals.

Every claim script writes ``results/<claim>.json`` through :func:`write_claim` with the keys
the checks read — ``paper``, ``simjudge``, ``n``, ``ci95``, ``verified``, ``commit``,
``settings`` — plus ``reproduced``, ``notes``, ``details``, the machine, the load average
before and after, the versions and the wall time. The numbers come from the claim's
``score()``, which reads only its committed per-item results (:class:`ItemStore`), so
``make repro-replay`` recomputes them offline and compares them key by key
(:func:`compare_scored`).

LLM exchanges go through :func:`llm_client`: a :class:`~simjudge.llm.ReplayClient` over the
committed cache ``repro/replay/<claim>/`` (``auto`` when a model answers, ``replay`` when none
may).

Example:
    >>> bootstrap_ci([0.0, 1.0, 1.0, 1.0], n_boot=200)[0] <= 0.75
    True
    >>> wilson(0, 10)[0], round(wilson(10, 10)[1], 3)
    (0.0, 1.0)
"""

from __future__ import annotations

import json
import math
import os
import re
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from simjudge.llm import LLMClient, make_client
from simjudge.tasks.spec import versions
from simjudge.tasks.spec.io import atomic_write

__all__ = [
    "CLAIMS", "ITEMS", "REPLAY", "RESULTS", "ROOT", "SCORED_KEYS", "ItemStore", "bootstrap_ci",
    "compare_scored", "diff_values", "env_threads", "llm_client", "load_claim", "rescore_claim",
    "rounded", "wilson", "write_claim",
]

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "results"
ITEMS = ROOT / "repro" / "items"
REPLAY = ROOT / "repro" / "replay"

CLAIMS: dict[str, str] = {
    "robobench": "repro.robobench",
    "roboarena": "repro.roboarena",
    "eqarm": "repro.eqarm",
}
"""Claim name -> module; each module has ``run``, ``score`` and ``replay``."""

SCORED_KEYS: tuple[str, ...] = ("paper", "simjudge", "n", "ci95", "verified", "reproduced",
                                "details")
"""Keys of a result file that ``score()`` recomputes (and ``make repro-replay`` compares)."""

_DIGITS = 6


def rounded(value: Any, digits: int = _DIGITS) -> Any:
    """``value`` with every float rounded (and numpy scalars made plain), through JSON types."""
    if isinstance(value, bool | str) or value is None:
        return value
    if isinstance(value, int | np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        value = float(value)
        return None if math.isnan(value) else round(value, digits)
    if isinstance(value, Mapping):
        return {str(k): rounded(v, digits) for k, v in value.items()}
    if isinstance(value, Sequence | np.ndarray):
        return [rounded(v, digits) for v in value]
    raise TypeError(f"cannot store {type(value).__name__} in a result file: {value!r}")


def bootstrap_ci(values: Sequence[float], *, n_boot: int = 2000, seed: int = 0,
                 stat: Callable[[np.ndarray], float] = np.mean) -> list[float]:
    """The 95 % percentile-bootstrap interval of ``stat`` over ``values`` (seeded: exact).

    Raises:
        ValueError: No values.
    """
    data = np.asarray(values, dtype=float)
    if data.size == 0:
        raise ValueError("bootstrap_ci needs at least one value")
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, data.size, size=(n_boot, data.size))
    boot = np.array([stat(data[row]) for row in draws])
    return [round(float(np.percentile(boot, 2.5)), _DIGITS),
            round(float(np.percentile(boot, 97.5)), _DIGITS)]


def wilson(k: int, n: int, z: float = 1.959964) -> list[float]:
    """The Wilson score interval of a proportion ``k / n`` (``[0, 1]`` for ``n = 0``)."""
    if n <= 0:
        return [0.0, 1.0]
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return [round(max(0.0, centre - half), _DIGITS), round(min(1.0, centre + half), _DIGITS)]


def _safe(key: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.=-]", "_", key)


class ItemStore:
    """Per-item results of one claim: one JSON file per item, written atomically.

    A run checks :meth:`has` before measuring an item and :meth:`put` after, so a killed run
    resumes at the first missing item; ``score()`` reads :meth:`all`.

    Args:
        claim: The claim's name (folder ``repro/items/<claim>/``).
        part: A sub-folder (one condition of the claim), or ``""``.
        root: Items root (tests pass a temporary folder).
    """

    def __init__(self, claim: str, part: str = "", root: Path | None = None) -> None:
        self.root = (root or ITEMS) / claim / _safe(part) if part else (root or ITEMS) / claim

    def path(self, key: str) -> Path:
        """The file of item ``key``."""
        return self.root / f"{_safe(key)}.json"

    def has(self, key: str) -> bool:
        """Whether item ``key`` is stored."""
        return self.path(key).is_file()

    def get(self, key: str) -> Any:
        """Item ``key``.

        Raises:
            FileNotFoundError: Not stored (the message says how to make it).
        """
        path = self.path(key)
        if not path.is_file():
            raise FileNotFoundError(f"no stored item {key!r} in {self.root}: run the claim's "
                                    "script (python -m repro.<claim>) to measure it")
        return json.loads(path.read_text(encoding="utf-8"))

    def put(self, key: str, value: Any) -> Path:
        """Store item ``key`` (floats rounded, keys sorted: diffs stay readable)."""
        path = self.path(key)
        atomic_write(path, json.dumps(rounded(value), indent=1, sort_keys=True) + "\n")
        return path

    def keys(self) -> list[str]:
        """Stored item keys, sorted."""
        return sorted(p.stem for p in self.root.glob("*.json")) if self.root.is_dir() else []

    def all(self) -> dict[str, Any]:
        """Every stored item, by key (sorted)."""
        return {k: self.get(k) for k in self.keys()}


def llm_client(spec: str, claim: str, default_model: str, *,
               cache: Path | None = None) -> LLMClient:
    """The LLM of a claim behind its replay cache.

    Args:
        spec: ``local`` (the embedded ``default_model``), ``local:MODEL``, ``openai:MODEL``
            (a server at ``SIMJUDGE_LLM_BASE_URL``), ``replay`` (the cache only, as recorded
            with ``default_model``) or ``replay:local:MODEL`` / ``replay:openai:MODEL``.
        claim: The claim (cache folder ``repro/replay/<claim>/``).
        default_model: The embedded model the claim's committed cache was recorded with.
        cache: Another cache folder (runs at larger scale keep theirs apart).

    Raises:
        ValueError: An unknown spec (the message lists the forms).
    """
    mode = "auto"
    if spec == "replay" or spec.startswith("replay:"):
        mode, spec = "replay", spec.partition(":")[2] or "local"
    backend, _, model = spec.partition(":")
    if backend == "local":
        inner = f"llamacpp:{model or default_model}"
    elif backend == "openai" and model:
        inner = spec
    else:
        raise ValueError(f"unknown --llm {spec!r}; use local, local:MODEL, openai:MODEL, replay "
                         "or replay:openai:MODEL")
    return make_client(inner, cache_dir=cache or REPLAY / claim, mode=mode)


def write_claim(claim: str, scored: Mapping[str, Any], *, settings: Mapping[str, Any],
                started: float, load_before: Sequence[float], out: Path | None = None) -> Path:
    """Write ``results/<claim>.json``: ``scored`` (the keys of ``score()``) plus provenance.

    Args:
        claim: The claim's name.
        scored: What the claim's ``score()`` returned (``title``, ``notes`` and
            :data:`SCORED_KEYS`).
        settings: The run's settings (sizes, models, seeds, workers, commands).
        started: ``time.perf_counter()`` at the start of the run (wall time).
        load_before: The load average when the run started.
        out: Another path (tests).

    Raises:
        KeyError: ``scored`` lacks one of :data:`SCORED_KEYS`.
    """
    from bench.results import commit, load, machine

    missing = [k for k in SCORED_KEYS if k not in scored]
    if missing:
        raise KeyError(f"score() of {claim} must return {list(SCORED_KEYS)}; missing {missing}")
    payload = {
        "claim": claim, "title": scored.get("title", claim), **rounded(dict(scored)),
        "commit": commit(), "settings": rounded(dict(settings)), "machine": machine(),
        "load_before": list(load_before), "load_after": load(),
        "versions": versions(), "wall_s": round(time.perf_counter() - started, 1),
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    path = out or RESULTS / f"{claim}.json"
    atomic_write(path, json.dumps(payload, indent=2) + "\n")
    return path


def rescore_claim(claim: str, scored: Mapping[str, Any], out: Path | None = None) -> Path:
    """Replace the scored keys of an existing ``results/<claim>.json``; keep its provenance.

    For a change in how stored items are scored (not a new measurement): settings, machine,
    load and wall time stay the run's; ``rescored_commit`` is added.

    Raises:
        FileNotFoundError: No result file yet (run the claim first).
    """
    from bench.results import commit

    path = out or RESULTS / f"{claim}.json"
    data = load_claim(claim, path.parent)
    data.update({"title": scored.get("title", claim), **rounded(dict(scored)),
                 "rescored_commit": commit()})
    atomic_write(path, json.dumps(data, indent=2) + "\n")
    return path


def load_claim(claim: str, results: Path | None = None) -> dict[str, Any]:
    """``results/<claim>.json``.

    Raises:
        FileNotFoundError: Not written yet (the message names the script).
    """
    path = (results or RESULTS) / f"{claim}.json"
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: run python -m {CLAIMS.get(claim, claim)}")
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def compare_scored(stored: Mapping[str, Any], fresh: Mapping[str, Any],
                   prefix: str = "") -> list[str]:
    """Where a ``score()`` differs from a result file on :data:`SCORED_KEYS` (empty: exact)."""
    fresh = json.loads(json.dumps(rounded(dict(fresh))))
    diffs: list[str] = []
    for key in SCORED_KEYS:
        diffs += diff_values(stored.get(key), fresh.get(key), f"{prefix}{key}")
    return diffs


def diff_values(stored: Any, fresh: Any, where: str = "") -> list[str]:
    """Where ``fresh`` differs from ``stored`` (JSON values; floats rounded first)."""
    out: list[str] = []
    _diff(json.loads(json.dumps(rounded(stored))), json.loads(json.dumps(rounded(fresh))),
          where, out)
    return out


def _diff(a: Any, b: Any, where: str, out: list[str]) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            _diff(a.get(key), b.get(key), f"{where}.{key}", out)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _diff(x, y, f"{where}[{i}]", out)
    elif a != b:
        out.append(f"{where}: committed {json.dumps(a)[:80]} != re-scored {json.dumps(b)[:80]}")


def env_threads() -> None:
    """One torch thread (tight loops share the machine)."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:  # pragma: no cover - torch is a core dependency
        pass
