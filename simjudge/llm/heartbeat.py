"""Progress you can see while a local model thinks: status lines on any stream, TTY or not.

A :class:`Heartbeat` prints one line when generation starts (what is being generated, the
prompt's size, the threads), then one every ``interval`` seconds while tokens come in (or
while the prompt is still being read, when none have come yet), and one when it ends: tokens
so far and tokens per second. Why not only a progress bar: a bar is hidden when the output is
not a terminal (``make demo | tee``, CI logs), and it shows nothing while a long prompt is
read, which on two busy cores took many minutes.

Example:
    >>> import io
    >>> out = io.StringIO()
    >>> beat = Heartbeat("qwen", "candidate 1/3", prompt_tokens=800, threads=1, stream=out,
    ...                  clock=iter([0.0, 0.0, 4.0]).__next__)
    >>> beat.start(); beat.token(); beat.token(); beat.finish()
    >>> print(out.getvalue().strip())
    LLM qwen: candidate 1/3: reading the prompt (800 tokens, 1 thread) ...
    LLM qwen: candidate 1/3: done, 2 tokens in 4.0 s (0.5 tokens/s)
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import TextIO

__all__ = ["Heartbeat", "free_cores", "set_progress_label"]


def free_cores(cpus: int | None = None, load: float | None = None) -> int:
    """The usable CPUs not busy now: ``round(cpus - 1-minute load average)``, at least 1.

    >>> free_cores(cpus=2, load=0.1), free_cores(cpus=2, load=1.4), free_cores(cpus=2, load=3.0)
    (2, 1, 1)
    """
    import os

    if cpus is None:
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    if load is None:
        try:
            load = os.getloadavg()[0]
        except OSError:  # pragma: no cover - platforms without a load average
            load = 0.0
    return max(1, min(cpus or 1, int(round((cpus or 1) - load))))


class Heartbeat:
    """Status lines of one generation (see the module docstring).

    Args:
        model: The model's name.
        label: What is being generated (``candidate 2/3``).
        prompt_tokens: The prompt's length in tokens (None: unknown).
        threads: CPU threads generating.
        interval: Seconds between status lines while generating.
        stream: Where lines go (default: standard error).
        clock: The time source (seconds).
    """

    def __init__(self, model: str, label: str = "", prompt_tokens: int | None = None,
                 threads: int | None = None, interval: float = 15.0, stream: TextIO | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.model = model
        self.label = label
        self.prompt_tokens = prompt_tokens
        self.threads = threads
        self.interval = float(interval)
        self.stream = stream
        self.clock = clock
        self.tokens = 0
        self._start = 0.0
        self._first = 0.0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _say(self, text: str) -> None:
        head = f"LLM {self.model}: " + (f"{self.label}: " if self.label else "")
        stream = self.stream if self.stream is not None else sys.stderr
        print(head + text, file=stream, flush=True)

    def start(self, background: bool = False) -> None:
        """The first line; with ``background``, a thread that prints every ``interval`` s."""
        self._start = self.clock()
        size = f"{self.prompt_tokens} tokens" if self.prompt_tokens is not None else "size unknown"
        threads = "" if self.threads is None else (
            f", {self.threads} thread{'s' if self.threads != 1 else ''}")
        self._say(f"reading the prompt ({size}{threads}) ...")
        if background:
            self._thread = threading.Thread(target=self._beat, daemon=True)
            self._thread.start()

    def token(self) -> None:
        """Count one generated token."""
        if self.tokens == 0:
            self._first = self.clock()
        self.tokens += 1

    def status(self) -> str:
        """The current status line's text."""
        elapsed = self.clock() - self._start
        if self.tokens == 0:
            return f"still reading the prompt ({elapsed:.0f} s)"
        generating = max(self.clock() - self._first, 1e-9)
        return (f"{self.tokens} tokens so far, {self.tokens / generating:.1f} tokens/s "
                f"({elapsed:.0f} s)")

    def _beat(self) -> None:
        while not self._stop.wait(self.interval):
            self._say(self.status())

    def finish(self) -> None:
        """Stop the background thread; the last line."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        elapsed = max(self.clock() - self._start, 1e-9)
        self._say(f"done, {self.tokens} tokens in {elapsed:.1f} s "
                  f"({self.tokens / elapsed:.1f} tokens/s)")


def set_progress_label(client: object, label: str) -> None:
    """Name what the next generation is for (``candidate 2/3``) on a client.

    The label is set on the client and on the clients it wraps (replay caches, logs: their
    ``inner``), wherever one shows status lines.
    """
    seen = 0
    while client is not None and seen < 16:
        if hasattr(client, "progress_label"):
            client.progress_label = label
        client = getattr(client, "inner", None)
        seen += 1
