"""Append-only JSONL log of LLM exchanges.

One line per call, written when the call returns, so a run directory shows exactly what
was asked, of which model, what came back, how long it took and whether it was a cache
hit. Lines are independent JSON objects; a crashed run loses at most the call in flight.

Line fields:
    ``time`` (ISO-8601 UTC), ``request_hash``, ``backend``, ``model``, ``cached``,
    ``latency_s``, ``prompt_tokens``, ``completion_tokens``, ``finish_reason``,
    ``constrained``, and unless ``include_content=False``: ``request`` (messages and
    parameters) and ``text`` (the reply).
"""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .base import LLMRequest, LLMResponse

__all__ = ["LLMLog"]


class LLMLog:
    """Thread-safe JSONL exchange log.

    Args:
        path: The ``.jsonl`` file; parent folders are created.
        include_content: Also store messages and reply text (set False for private data).
    """

    def __init__(self, path: str | Path, *, include_content: bool = True) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.include_content = include_content
        self._lock = threading.Lock()

    def append(self, request: LLMRequest, response: LLMResponse) -> dict[str, Any]:
        """Append one exchange and return the record written."""
        record: dict[str, Any] = {"time": datetime.now(UTC).isoformat(timespec="milliseconds")}
        record.update(response.to_dict())
        text = record.pop("text")
        if self.include_content:
            record["request"] = request.to_dict()
            record["text"] = text
        line = json.dumps(record, ensure_ascii=False) + "\n"
        with self._lock, self.path.open("a", encoding="utf-8") as fh:
            fh.write(line)
        return record

    def read(self) -> list[dict[str, Any]]:
        """All records, oldest first (an empty list when nothing was logged)."""
        if not self.path.exists():
            return []
        with self.path.open(encoding="utf-8") as fh:
            return [json.loads(line) for line in fh if line.strip()]

    def __repr__(self) -> str:
        return f"LLMLog({str(self.path)!r})"
