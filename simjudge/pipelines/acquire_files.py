"""The acquisition run's checkpoints, written with checksums and validated when resumed.

:func:`simjudge.pipelines.acquire.acquire` resumes from three kinds of files; each is checked
before it is trusted, and a bad one (truncated, corrupt, not UTF-8, not the expected
schema) is set aside by :meth:`~simjudge.tasks.spec.RunDir.load` (reported by name: a
:class:`~simjudge.tasks.spec.rundir.RunDirRepairWarning` and a line in ``repairs.jsonl``)
and its step redone:

- a round's proposals: the index (``proposals/index.json``, ``proposals/round_<r>.json``)
  records the SHA-256 of every candidate YAML, and each YAML has its own checksum, so a
  truncated YAML that still parses (issue 16: reward code cut to ``"de"``) is caught; the
  round is proposed again (deterministic proposers and the LLM replay cache give the same
  candidates; candidates that came out different make their later files stale, and those
  are set aside too);
- a round's verification file: the ranking must be a permutation of the round's
  candidates, with details for each; it is scored again;
- each executed candidate's ``outcomes/<cid>.json``: valid JSON that
  :meth:`Outcome.from_dict` accepts; the candidate is executed again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

import yaml

from simjudge.tasks.spec import Outcome, RunDir, Solution
from simjudge.tasks.spec.io import CorruptFileError
from simjudge.tasks.spec.rundir import RunDirCorruptError

__all__ = ["check_outcomes", "load_proposals", "load_verification", "save_proposals",
           "save_verification"]


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _check_index(data: Any) -> None:
    if not isinstance(data, dict):
        raise TypeError(f"expected a JSON object, got {type(data).__name__}")
    candidates = data["candidates"]
    if not isinstance(candidates, list) or not all(isinstance(c, str) for c in candidates):
        raise TypeError("'candidates' must be a list of candidate ids")
    if not isinstance(data["failures"], list):
        raise TypeError("'failures' must be a list")
    digests = data.get("sha256", {})
    if not isinstance(digests, dict):
        raise TypeError("'sha256' must map candidate ids to digests")


def _read_candidate(run: RunDir, cid: str, digest: str | None) -> Solution:
    name = f"proposals/{cid}.yaml"
    text = run.read_text(name)
    path = run.path(name)
    if digest is not None and _sha256(text) != digest:
        raise RunDirCorruptError(path, "is truncated or changed (its SHA-256 differs from the "
                                 "one the proposal index recorded)")
    try:
        from simjudge.tasks.spec.bounded import load_yaml

        return Solution.parse(load_yaml(text, str(path)))
    except (yaml.YAMLError, ValueError, TypeError) as exc:
        raise RunDirCorruptError(path, f"is not a valid solution ({exc})") from None


def load_proposals(run: RunDir, index: str) -> tuple[dict[str, Solution], list] | None:
    """A round's recorded proposals, or None when the round must be proposed (again).

    A bad index or candidate YAML is set aside (with the index: the round is redone).
    """
    data = run.load(index, lambda name: run.read_json(name, check=_check_index))
    if data is None:
        return None
    digests = data.get("sha256", {})
    solutions = {}
    for cid in data["candidates"]:
        name = f"proposals/{cid}.yaml"
        try:
            solutions[cid] = _read_candidate(run, cid, digests.get(cid))
        except (RunDirCorruptError, FileNotFoundError) as exc:
            if isinstance(exc, CorruptFileError):
                run.set_aside(name, exc)
            missing = RunDirCorruptError(run.path(index), f"lists {cid}, whose YAML is bad "
                                         "or missing; the round is proposed again")
            run.set_aside(index, missing)
            return None
    return solutions, data["failures"]


def _previous_digests(run: RunDir, index: str, cids: Sequence[str]) -> dict[str, str | None]:
    """What each candidate's YAML was before a round is proposed again (None: unknown).

    From the round's index set aside last, if it is readable; else from each YAML still on
    disk that passes its checksum. A candidate whose YAML was set aside is unknown.
    """
    path = run.path(index)
    asides = sorted(path.parent.glob(path.name + ".corrupt*"), key=lambda p: p.stat().st_mtime)
    for aside in reversed(asides):
        try:
            data = json.loads(aside.read_text(encoding="utf-8"))
        except (ValueError, OSError):
            continue
        if isinstance(data, dict) and isinstance(data.get("sha256"), dict):
            return dict(data["sha256"])
    before: dict[str, str | None] = {}
    for cid in cids:
        name = f"proposals/{cid}.yaml"
        if run.exists(name):
            try:
                before[cid] = _sha256(run.read_text(name))
            except RunDirCorruptError:
                before[cid] = None
        elif list(run.path("proposals").glob(f"{cid}.yaml.corrupt*")):
            before[cid] = None
    return before


def save_proposals(run: RunDir, index: str, solutions: dict[str, Solution],
                   record: dict[str, Any]) -> list[str]:
    """Write each candidate YAML, then the index with their digests (the index last).

    Returns:
        Candidates proposed before (a round being redone) whose YAML is not known to be
        the same now: whatever was made from them (verification, outcome, execution) is
        stale.
    """
    before = _previous_digests(run, index, list(solutions))
    digests = {}
    for cid, solution in solutions.items():
        text = solution.to_yaml()
        run.write_text(f"proposals/{cid}.yaml", text)
        digests[cid] = _sha256(text)
    run.write_json(index, {**record, "candidates": list(solutions), "sha256": digests})
    return [cid for cid, digest in before.items() if digest is None or digests.get(cid) != digest]


def set_aside_stale(run: RunDir, names: Sequence[str]) -> None:
    """Set aside files and folders made from candidates that came out different."""
    for name in names:
        if run.exists(name):
            run.set_aside(name, RunDirCorruptError(
                run.path(name), "was made from a candidate that was proposed again differently"))


def load_verification(run: RunDir, name: str,
                      candidates: Sequence[str]) -> tuple[list[str], dict] | None:
    """A round's recorded ranking and details, or None when it must be scored (again)."""

    def check(data: Any) -> None:
        if not isinstance(data, dict):
            raise TypeError(f"expected a JSON object, got {type(data).__name__}")
        ranking, details = data["ranking"], data["details"]
        if not isinstance(ranking, list) or sorted(ranking) != sorted(candidates):
            raise ValueError(f"its ranking {ranking!r:.200} is not an order of this round's "
                             f"candidates {list(candidates)}")
        if not isinstance(details, dict) or not set(candidates) <= set(details):
            raise ValueError("it lacks the details of some candidates")

    data = run.load(name, lambda n: run.read_json(n, check=check))
    return None if data is None else (data["ranking"], data["details"])


def save_verification(run: RunDir, name: str, record: dict[str, Any]) -> None:
    """Write a round's verification file (checksummed)."""
    run.write_json(name, record)


def check_outcomes(run: RunDir, candidates: Sequence[str]) -> list[str]:
    """Set aside the recorded outcomes of ``candidates`` that are not valid; return them.

    The executor then runs those candidates again (a missing outcome is not yet done).
    """
    bad = []
    for cid in candidates:
        name = f"outcomes/{cid}.json"
        if run.exists(name) and run.load(
                name, lambda n: run.read_json(n, check=Outcome.from_dict)) is None:
            bad.append(cid)
    return bad
