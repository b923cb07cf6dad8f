"""LLMLog stores each distinct image once beside the log and restores it on read."""

from __future__ import annotations

import copy
import io

import numpy as np
import pytest
from PIL import Image

from simjudge.llm.base import LLMRequest, LLMResponse
from simjudge.llm.log import IMAGE_REF_PREFIX, LLMLog
from simjudge.llm.openai_http import image_message, message_images


def _png(seed: int) -> bytes:
    pixels = np.random.default_rng(seed).integers(0, 255, size=(32, 32, 3), dtype=np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, "PNG")
    return buffer.getvalue()


def test_images_stored_once_and_restored_on_read(tmp_path):
    frames = [_png(0), _png(1)]
    log = LLMLog(tmp_path / "llm_log.jsonl")
    requests = [
        LLMRequest(messages=[image_message("first", frames)]),
        LLMRequest(messages=[image_message("again", [frames[1], frames[0]])]),
    ]
    sent = copy.deepcopy([r.to_dict() for r in requests])
    for request in requests:
        log.append(request, LLMResponse(text="50", model="m", backend="replay"))

    assert [r.to_dict() for r in requests] == sent  # the live requests are untouched
    text = log.path.read_text()
    assert "base64" not in text and text.count(IMAGE_REF_PREFIX) == 4
    assert len(list(log.image_folder.iterdir())) == 2  # two distinct images, four parts
    records = log.read()
    assert [r["request"] for r in records] == sent
    assert message_images(records[1]["request"]["messages"][0]) == [frames[1], frames[0]]


def test_missing_image_file_names_the_fix(tmp_path):
    log = LLMLog(tmp_path / "llm_log.jsonl")
    log.append(LLMRequest(messages=[image_message("q", [_png(2)])]),
               LLMResponse(text="1", model="m", backend="replay"))
    for path in log.image_folder.iterdir():
        path.unlink()
    with pytest.raises(FileNotFoundError, match=r"\.images folder"):
        log.read()


def test_text_only_requests_unchanged(tmp_path):
    log = LLMLog(tmp_path / "llm_log.jsonl")
    request = LLMRequest(messages=[{"role": "user", "content": "hello"}])
    log.append(request, LLMResponse(text="hi", model="m", backend="replay"))
    assert log.read()[0]["request"] == request.to_dict()
    assert not log.image_folder.exists()


def test_content_parts_that_are_not_dicts_are_kept_as_they_are(tmp_path):
    log = LLMLog(tmp_path / "llm_log.jsonl")
    message = {"role": "user", "content": ["a bare string part", *image_message("q", [_png(3)])["content"]]}
    log.append(LLMRequest(messages=[message]), LLMResponse(text="1", model="m", backend="replay"))
    assert log.read()[0]["request"]["messages"] == [message]
