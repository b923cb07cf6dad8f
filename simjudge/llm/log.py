"""Append-only JSONL log of LLM exchanges.

One line per call, written when the call returns, so a run directory shows exactly what
was asked, of which model, what came back, how long it took and whether it was a cache
hit. Lines are independent JSON objects; a crashed run loses at most the call in flight.

Line fields:
    ``time`` (ISO-8601 UTC), ``request_hash``, ``backend``, ``model``, ``cached``,
    ``latency_s``, ``prompt_tokens``, ``completion_tokens``, ``finish_reason``,
    ``constrained``, and unless ``include_content=False``: ``request`` (messages and
    parameters) and ``text`` (the reply).

Images (``data:`` URLs of image parts, e.g. rendered frames sent to a VLM) are not copied into
every line: each distinct image is stored once as ``<log name>.images/<sha256>.<ext>`` and the
line's URL becomes ``simjudge-image:<sha256>.<ext>``; :meth:`LLMLog.read` puts the ``data:``
URLs back, so readers see the request as it was sent. Why: a judge that sends keyframes every
few steps would otherwise write megabytes of base64 per episode, mostly the same frames.
"""

from __future__ import annotations

import hashlib
import json
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from simjudge.tasks.spec.io import atomic_write

from .base import LLMRequest, LLMResponse, image_data_url, parse_image_data_url

__all__ = ["IMAGE_REF_PREFIX", "LLMLog"]

IMAGE_REF_PREFIX = "simjudge-image:"
"""How a logged image part points at its stored file (``simjudge-image:<sha256>.<ext>``)."""


class LLMLog:
    """Thread-safe JSONL exchange log.

    Args:
        path: The ``.jsonl`` file; parent folders are created.
        include_content: Also store messages and reply text (set False for private data).

    Examples:
        >>> import tempfile
        >>> from simjudge.llm.base import LLMRequest, LLMResponse, image_data_url
        >>> part = {"type": "image_url", "image_url": {"url": image_data_url(b"a frame")}}
        >>> msg = {"role": "user", "content": [{"type": "text", "text": "progress?"}, part]}
        >>> log = LLMLog(Path(tempfile.mkdtemp()) / "llm_log.jsonl")
        >>> _ = log.append(LLMRequest(messages=[msg]), LLMResponse(text="50", model="m", backend="replay"))
        >>> "base64" in log.path.read_text(), len(list(log.image_folder.iterdir()))
        (False, 1)
        >>> log.read()[0]["request"]["messages"] == [msg]
        True
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
            record["request"] = self._store_images(request.to_dict())
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
            records = [json.loads(line) for line in fh if line.strip()]
        for record in records:
            if "request" in record:
                record["request"] = _map_image_urls(record["request"], self._inline)
        return records

    @property
    def image_folder(self) -> Path:
        """Where the log's images are stored, one file per distinct image."""
        return self.path.with_name(self.path.name + ".images")

    def _store_images(self, request: dict[str, Any]) -> dict[str, Any]:
        """The request with each image ``data:`` URL replaced by a reference to its stored file."""
        return _map_image_urls(request, self._store)

    def _store(self, url: str) -> str:
        parsed = parse_image_data_url(url)
        if parsed is None:
            return url
        ext, raw = parsed[0] or "bin", parsed[1]
        name = f"{hashlib.sha256(raw).hexdigest()}.{ext}"
        path = self.image_folder / name
        if not path.exists():
            atomic_write(path, raw)
        return IMAGE_REF_PREFIX + name

    def _inline(self, url: str) -> str:
        if not url.startswith(IMAGE_REF_PREFIX):
            return url
        name = url[len(IMAGE_REF_PREFIX) :]
        path = self.image_folder / name
        if not path.exists():
            raise FileNotFoundError(
                f"{self.path} refers to image {name}, which is missing from {self.image_folder}; "
                "copy the log together with its .images folder"
            )
        ext = name.rpartition(".")[2]
        return image_data_url(path.read_bytes(), ext)

    def __repr__(self) -> str:
        return f"LLMLog({str(self.path)!r})"


def _map_image_urls(request: dict[str, Any], change: Any) -> dict[str, Any]:
    """A copy of ``request`` with ``change(url) -> url`` applied to every image part's URL.

    A copy: the caller's messages (shared with the live request) are never modified.
    """
    messages = []
    for message in request.get("messages") or ():
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            message = {**message, "content": [_map_part(part, change) for part in content]}
        messages.append(message)
    return {**request, "messages": messages} if "messages" in request else request


def _map_part(part: Any, change: Any) -> Any:
    if not isinstance(part, dict) or part.get("type") != "image_url":
        return part
    image = part.get("image_url")
    if not isinstance(image, dict):
        return part
    url = image.get("url")
    return {**part, "image_url": {**image, "url": change(url)}} if isinstance(url, str) else part
