"""Rendered frames to multimodal models: image content parts, a real HTTP server, replay."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from simjudge.cli import main
from simjudge.llm import LLMLog
from simjudge.llm.base import LLMRequest, request_hash
from simjudge.llm.openai_http import image_message, image_part, message_images
from tests.tasks.test_llm_http import ChatServer, chat_reply


def _png(value: int) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(np.full((4, 4, 3), value, dtype=np.uint8)).save(buf, "PNG")
    return buf.getvalue()


def test_image_parts_are_validated_hashed_and_decodable(tmp_path):
    red, blue = _png(200), _png(20)
    part = image_part(red)
    assert part["type"] == "image_url" and part["image_url"]["url"].startswith("data:image/png;base64,")
    (tmp_path / "f.png").write_bytes(blue)
    msg = image_message("what is open?", [red, tmp_path / "f.png"])
    assert message_images(msg) == [red, blue]
    with pytest.raises(ValueError, match="PNG"):
        image_part(b"GIF89a....")
    req = LLMRequest.build([msg])
    assert req.to_dict()["messages"][0]["content"][0] == {"type": "text", "text": "what is open?"}
    other = LLMRequest.build([image_message("what is open?", [blue, blue])])
    assert request_hash("openai", "m", req) != request_hash("openai", "m", other)
    with pytest.raises(ValueError, match=r"messages\[0\]\.content\[1\]"):
        LLMRequest.build([{"role": "user", "content": [{"type": "text", "text": "x"},
                                                       {"type": "audio"}]}])


def _answer(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    props = body["response_format"]["json_schema"]["schema"]["properties"]
    if "plan_step" in props:
        return chat_reply(json.dumps({"task_summary": "open it", "reason": "r",
                                      "plan_step": ["grasp(drawer)", "open(drawer)"]}))
    if "next_step" in props:
        return chat_reply('{"next_step": "open(drawer)"}')
    return chat_reply('{"answer": "yes"}')


@pytest.fixture
def vlm_server(monkeypatch):
    srv = ChatServer()
    srv.script = _answer
    monkeypatch.setenv("SIMJUDGE_LLM_BASE_URL", srv.base_url)
    yield srv
    srv.close()


def _images_sent(request: dict[str, Any]) -> list[bytes]:
    return [png for m in request["body"]["messages"] for png in message_images(m)]


def test_openai_planner_sends_the_rendered_frames_and_replays(vlm_server, tmp_path, capsys):
    out = tmp_path / "vlm"
    flags = ["--tasks", "OpenDrawer-v0", "--images", "--no-failures"]
    assert main(["plan-eval", "--planner", "openai:vlm-test", *flags, "--out", str(out)]) == 0
    task = json.loads((out / "tasks" / "OpenDrawer-v0.json").read_text())
    sent = [_images_sent(r) for r in vlm_server.requests]
    logged = [message_images(r["request"]["messages"][-1])
              for r in LLMLog(out / "llm_log.jsonl").read()]
    assert len(logged) == 1 + len(task["q2_items"]) + len(task["q3_items"])
    assert all(len(frames) == 1 for frames in logged)  # every question carries its frame
    cached = [r["cached"] for r in LLMLog(out / "llm_log.jsonl").read()]
    assert [f for f, hit in zip(logged, cached, strict=True) if not hit] == sent  # as received
    assert logged[0][0] == Path(task["image"]).read_bytes()  # Q1: the initial scene
    q3_frames = [[Path(i["image"]).read_bytes()] for i in task["q3_items"]]
    assert logged[-len(q3_frames):] == q3_frames  # Q3: the real intermediate states
    opened = next(i for i in task["q3_items"] if i["milestone"] == "drawer opened" and i["answer"])
    assert Path(opened["image"]).read_bytes() != logged[0][0]  # the drawer moved
    rgb = np.asarray(Image.open(io.BytesIO(sent[0][0])))
    assert rgb.shape == (240, 320, 3) and rgb.std() > 5
    # replayed from the cache with the server's answers gone: same frames, same hashes
    vlm_server.script = []
    again = tmp_path / "replay"
    assert main(["plan-eval", "--planner", "replay:openai:vlm-test", *flags, "--llm-cache",
                 str(out / "llm_cache"), "--out", str(again)]) == 0
    replayed = json.loads((again / "tasks" / "OpenDrawer-v0.json").read_text())
    assert replayed["q3_items"] and [i["proposed"] for i in replayed["q3_items"]] \
        == [i["proposed"] for i in task["q3_items"]]
    assert replayed["plan"] == task["plan"] and len(vlm_server.requests) == len(sent)
    assert main(["plan-eval", "--planner", "llamacpp:qwen2.5-coder-1.5b", "--images",
                 "--tasks", "OpenDrawer-v0", "--out", str(tmp_path / "txt")]) == 2
    assert "text-only" in capsys.readouterr().err
