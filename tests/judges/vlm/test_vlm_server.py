"""The VLM judges against a REAL OpenAI-compatible server on 127.0.0.1 (marked ``llm``).

llama.cpp's ``llama_cpp.server`` with the embedded SmolLM2-135M (``text_only_server.py``):
a text-only model, so it ignores the images; these tests check the whole path — frames
rendered by the simulator, PNG data URLs in OpenAI content parts, the HTTP exchange, the
reply parsed, logged — and the error a text-only server gives. Run: ``make test-llm``.
"""

from __future__ import annotations

import numpy as np
import pytest

from simjudge.judges import JudgeReward, make_judge
from simjudge.judges.vlm import VLMServerError, image_parts_of
from simjudge.llm import LLMLog, OpenAIClient, llama_cpp_available
from simjudge.tasks.spec import make_task_env
from tests.judges.vlm.text_only_server import serve

pytestmark = [
    pytest.mark.llm,
    pytest.mark.skipif(not llama_cpp_available(), reason="llama-cpp-python is not installed"),
]


def test_vlm_step_judge_on_a_real_server_through_the_wrappers(tmp_path):
    log = LLMLog(tmp_path / "exchanges.jsonl")
    env = make_task_env("OpenDrawer-v0", render_mode="rgb_array", horizon=4)
    with serve() as base_url:
        client = OpenAIClient("smollm2-135m", base_url=base_url, log=log, max_retries=0)
        judge = make_judge("vlm-step", client=client, every=2, size=48, max_tokens=32)
        wrapped = JudgeReward(env, judge)
        wrapped.reset(seed=0)
        infos = [wrapped.step(np.zeros(env.action_space.shape, np.float32))[4]
                 for _ in range(4)]
        wrapped.close()
    records = log.read()
    assert [len(image_parts_of(r["request"]["messages"])) for r in records] == [1, 2, 2]
    for record in records:
        assert record["backend"] == "openai" and not record["cached"]
        assert record["text"] and record["completion_tokens"] > 0 and record["latency_s"] > 0
        image = image_parts_of(record["request"]["messages"])[-1]
        assert image.shape == (36, 48, 3) and image.std() > 0  # a rendered scene, not blank
    phis = [judge.explain(wrapped.last_fast).phi, *(i["judge_reward"]["term"] for i in infos)]
    assert all(0.0 <= p <= 1.0 for p in phis)


def test_a_text_only_server_rejecting_images_gives_a_clear_error():
    frame = np.full((36, 48, 3), 128, np.uint8)
    with serve(stock=True) as base_url:
        client = OpenAIClient("smollm2-135m", base_url=base_url, max_retries=0)
        judge = make_judge("image-episode", client=client, size=48, max_tokens=16)
        with pytest.raises(VLMServerError, match="text-only") as err:
            judge.judge_frames([frame, frame], "Open the drawer")
    assert "HTTP 500" in str(err.value) and "clip_model_path" in str(err.value)
