"""Open a report in a real headless Chromium and report what the page did.

Chromium (Debian's ``chromium`` package) is started with its DevTools protocol on a free
loopback port; the page is loaded, console messages, uncaught exceptions and failed
resource loads are collected, and a small script counts what the page shows (tables,
figures, videos, headings). Used by the report tests and to take the README's
screenshot. Nothing leaves 127.0.0.1.

Example (needs Chromium)::

    result = inspect_page("runs/audit/report.html")
    assert not result.errors and result.counts["table"] > 0
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from websockets.sync.client import ClientConnection, connect

from simjudge.envs.errors import SimjudgeError

__all__ = ["BrowserError", "PageResult", "chromium_path", "inspect_page"]

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--no-first-run", "--no-default-browser-check", "--mute-audio")
"""Command-line flags of the headless browser."""

_COUNT_JS = """JSON.stringify({
  table: document.querySelectorAll('table').length,
  svg: document.querySelectorAll('figure svg').length,
  video: document.querySelectorAll('video').length,
  h2: Array.from(document.querySelectorAll('h2')).map(h => h.textContent),
  th: Array.from(new Set(Array.from(document.querySelectorAll('th')).map(t => t.textContent))),
  rows: document.querySelectorAll('tbody tr').length,
  title: document.title,
  ready: document.readyState
})"""


class BrowserError(SimjudgeError, RuntimeError):
    """Chromium is missing or did not answer; the message says how to install it."""


@dataclass
class PageResult:
    """What the browser saw.

    Attributes:
        errors: Console errors, uncaught exceptions and failed loads (empty = clean).
        messages: Every console message as ``level: text``.
        counts: Tables, inline SVG figures, videos, headings, header cells, rows, title.
        screenshot: PNG bytes if requested.
    """

    errors: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    counts: dict[str, Any] = field(default_factory=dict)
    screenshot: bytes | None = None


def chromium_path() -> str | None:
    """The Chromium executable, or None (``apt-get install -y chromium``)."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


class _DevTools:
    """A minimal DevTools-protocol session over the page's WebSocket."""

    def __init__(self, url: str, timeout: float) -> None:
        self._stack = contextlib.ExitStack()
        self.ws: ClientConnection = self._stack.enter_context(
            connect(url, max_size=None, open_timeout=timeout))
        self.timeout = timeout
        self.next_id = 0
        self.events: list[dict[str, Any]] = []

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self.next_id += 1
        ident = self.next_id
        self.ws.send(json.dumps({"id": ident, "method": method, "params": params}))
        deadline = time.monotonic() + self.timeout
        while True:
            message = json.loads(self.ws.recv(timeout=max(deadline - time.monotonic(), 0.01)))
            if message.get("id") == ident:
                if "error" in message:
                    raise BrowserError(f"DevTools {method} failed: {message['error']}")
                return dict(message.get("result", {}))
            self.events.append(message)

    def wait_for(self, method: str) -> None:
        deadline = time.monotonic() + self.timeout
        while not any(e.get("method") == method for e in self.events):
            self.events.append(json.loads(self.ws.recv(timeout=max(deadline - time.monotonic(), 0.01))))

    def drain(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            try:
                self.events.append(json.loads(self.ws.recv(timeout=left)))
            except TimeoutError:
                return


def _page_socket(profile: Path, proc: subprocess.Popen[bytes], timeout: float) -> str:
    port_file = profile / "DevToolsActivePort"
    deadline = time.monotonic() + timeout
    while not port_file.exists() or not port_file.read_text().strip():
        if proc.poll() is not None or time.monotonic() > deadline:
            raise BrowserError("chromium did not open its DevTools port; is it installed "
                               "(apt-get install -y chromium)?")
        time.sleep(0.05)
    port = port_file.read_text().split()[0]
    browser = f"ws://127.0.0.1:{port}"
    import urllib.request

    with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=timeout) as reply:
        pages = [t for t in json.loads(reply.read()) if t.get("type") == "page"]
    if not pages:
        raise BrowserError(f"chromium at {browser} has no page to drive")
    return str(pages[0]["webSocketDebuggerUrl"])


def _errors(events: list[dict[str, Any]]) -> tuple[list[str], list[str]]:
    errors, messages = [], []
    for event in events:
        method, params = event.get("method"), event.get("params", {})
        if method == "Runtime.consoleAPICalled":
            text = " ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", []))
            messages.append(f"{params.get('type')}: {text}")
            if params.get("type") in ("error", "assert"):
                errors.append(f"console.{params.get('type')}: {text}")
        elif method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            errors.append(f"exception: {details.get('exception', {}).get('description', details.get('text'))}")
        elif method == "Log.entryAdded":
            entry = params.get("entry", {})
            messages.append(f"{entry.get('level')}: {entry.get('text')}")
            if entry.get("level") == "error":
                errors.append(f"log: {entry.get('text')} {entry.get('url', '')}".strip())
    return errors, messages


def inspect_page(path: str | Path, *, screenshot: bool = False, width: int = 1280, height: int = 1600,
                 timeout: float = 30.0, settle: float = 0.5) -> PageResult:
    """Load ``path`` in headless Chromium; return its errors, counts and a screenshot.

    Raises:
        BrowserError: Chromium is not installed or does not answer in ``timeout`` s.
    """
    exe = chromium_path()
    if exe is None:
        raise BrowserError("no Chromium found: apt-get install -y chromium")
    url = Path(path).resolve().as_uri()
    # Chromium's helper processes may still be writing the profile as the main one exits
    with tempfile.TemporaryDirectory(prefix="simjudge-chromium-",
                                     ignore_cleanup_errors=True) as tmp:
        profile = Path(tmp)
        cmd = [exe, *FLAGS, f"--user-data-dir={profile}", "--remote-debugging-port=0",
               "--remote-debugging-address=127.0.0.1", f"--window-size={width},{height}", "about:blank"]
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                env={**os.environ, "HOME": tmp}, start_new_session=True)
        try:
            tools = _DevTools(_page_socket(profile, proc, timeout), timeout)
            for domain in ("Runtime.enable", "Log.enable", "Page.enable"):
                tools.call(domain)
            tools.call("Page.navigate", url=url)
            tools.wait_for("Page.loadEventFired")
            tools.drain(settle)
            value = tools.call("Runtime.evaluate", expression=_COUNT_JS, returnByValue=True)
            result = PageResult(counts=json.loads(value["result"]["value"]))
            if screenshot:
                shot = tools.call("Page.captureScreenshot", format="png")
                result.screenshot = base64.b64decode(shot["data"])
            tools._stack.close()
            result.errors, result.messages = _errors(tools.events)
            return result
        finally:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)
            try:  # its renderer, GPU and zygote helpers are in the same new session
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
