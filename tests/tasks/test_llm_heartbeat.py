"""Progress while a local model thinks: status lines on any stream, threads from free cores.

Why: ``make demo`` printed nothing for ~40 minutes while the local model read its prompt
and proposed (the bar was hidden off a terminal, and showed nothing before the first token),
and it ran two llama.cpp threads on two busy cores.
"""

from __future__ import annotations

import io
import time

from simjudge.llm.heartbeat import Heartbeat, free_cores, set_progress_label
from simjudge.llm.llamacpp import default_threads


def test_lines_come_while_the_prompt_is_read_and_while_tokens_come():
    out = io.StringIO()
    beat = Heartbeat("m", "candidate 2/3", prompt_tokens=900, threads=1, interval=0.05,
                     stream=out)
    beat.start(background=True)
    time.sleep(0.16)  # nothing generated yet: the prompt is being read
    for _ in range(5):
        beat.token()
    time.sleep(0.12)
    beat.finish()
    lines = out.getvalue().splitlines()
    assert lines[0] == "LLM m: candidate 2/3: reading the prompt (900 tokens, 1 thread) ..."
    assert any("still reading the prompt" in line for line in lines[1:])
    assert any("5 tokens so far" in line and "tokens/s" in line for line in lines)
    assert lines[-1].startswith("LLM m: candidate 2/3: done, 5 tokens in ")
    assert beat._thread is not None and not beat._thread.is_alive()  # stopped by finish


def test_threads_are_the_free_cores_unless_set(monkeypatch):
    assert [free_cores(cpus=4, load=x) for x in (0.0, 1.2, 2.6, 9.0)] == [4, 3, 1, 1]
    monkeypatch.setenv("SIMJUDGE_LLM_THREADS", "3")
    assert default_threads() == 3
    monkeypatch.delenv("SIMJUDGE_LLM_THREADS")
    assert 1 <= default_threads() == free_cores()


def test_the_label_reaches_wrapped_clients():
    class Inner:
        progress_label = ""

    class Wrapper:
        def __init__(self, inner):
            self.inner = inner

    inner = Inner()
    set_progress_label(Wrapper(Wrapper(inner)), "propose candidate 1/2")
    assert inner.progress_label == "propose candidate 1/2"
