"""OpenAIClient against a real HTTP server on 127.0.0.1 (no mocks of our code)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from simjudge.llm import (
    LLMHTTPError,
    LLMLog,
    OpenAIClient,
    ReplayClient,
    StructuredOutputError,
    complete_structured,
    make_client,
)

Reply = tuple[int, dict[str, Any] | str]


def chat_reply(text: str, *, prompt_tokens: int = 7, completion_tokens: int = 3) -> Reply:
    """A 200 answer in the /v1/chat/completions shape."""
    return 200, {
        "id": "cmpl-1", "object": "chat.completion", "model": "served-model",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    }


class ChatServer:
    """A tiny OpenAI-compatible server that answers from a script and records requests."""

    def __init__(self) -> None:
        self.script: list[Reply] | Callable[[dict[str, Any]], Reply] = []
        self.requests: list[dict[str, Any]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server naming
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append({"path": self.path, "headers": dict(self.headers),
                                        "body": body})
                if callable(server.script):
                    status, payload = server.script(body)
                else:
                    status, payload = server.script.pop(0)
                data = (payload if isinstance(payload, str) else json.dumps(payload)).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True)
        self.thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server() -> Iterator[ChatServer]:
    srv = ChatServer()
    yield srv
    srv.close()


def client_for(server: ChatServer, **kwargs: Any) -> OpenAIClient:
    kwargs.setdefault("backoff_s", 0.01)
    return OpenAIClient("test-model", base_url=server.base_url, **kwargs)


MSGS = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]


def test_request_shape_usage_and_auth_header(server, monkeypatch):
    monkeypatch.setenv("MY_KEY_VAR", "sk-test-123")
    server.script = [chat_reply("hello")]
    client = client_for(server, api_key_env="MY_KEY_VAR")
    reply = client.complete(MSGS, temperature=0.2, max_tokens=17, seed=5, stop=["\n\n"])
    assert reply.text == "hello"
    assert (reply.backend, reply.model, reply.cached) == ("openai", "test-model", False)
    assert reply.usage == {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}
    assert reply.finish_reason == "stop" and reply.latency_s > 0
    sent = server.requests[0]
    assert sent["path"] == "/v1/chat/completions"
    assert sent["headers"]["Authorization"] == "Bearer sk-test-123"
    assert sent["body"] == {"model": "test-model", "messages": MSGS, "temperature": 0.2,
                            "max_tokens": 17, "seed": 5, "stop": ["\n\n"]}


def test_no_key_no_auth_header(server, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    server.script = [chat_reply("ok")]
    client_for(server).complete(MSGS)
    assert "Authorization" not in server.requests[0]["headers"]


def test_env_vars_configure_client(server, monkeypatch):
    monkeypatch.setenv("SIMJUDGE_LLM_BASE_URL", server.base_url)
    monkeypatch.setenv("SIMJUDGE_LLM_MODEL", "env-model")
    monkeypatch.setenv("SIMJUDGE_LLM_API_KEY_ENV", "OTHER_KEY")
    monkeypatch.setenv("OTHER_KEY", "k2")
    server.script = [chat_reply("ok")]
    client = OpenAIClient()
    assert client.complete(MSGS).model == "env-model"
    assert server.requests[0]["headers"]["Authorization"] == "Bearer k2"
    assert client.describe()["params"]["api_key_env"] == "OTHER_KEY"
    assert "k2" not in json.dumps(client.describe())


def test_retries_on_500_and_429_then_succeeds(server):
    server.script = [(500, {"error": "boom"}), (429, {"error": "slow down"}), chat_reply("ok")]
    reply = client_for(server, max_retries=3).complete(MSGS)
    assert reply.text == "ok"
    assert len(server.requests) == 3
    assert server.requests[0]["body"] == server.requests[2]["body"]


def test_gives_up_after_max_retries(server):
    server.script = lambda body: (503, {"error": "down"})
    with pytest.raises(LLMHTTPError, match="gave up after 3 attempts") as info:
        client_for(server, max_retries=2).complete(MSGS)
    assert info.value.status == 503
    assert len(server.requests) == 3


def test_client_error_is_not_retried_and_names_key_var(server, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    server.script = lambda body: (401, {"error": "bad key"})
    with pytest.raises(LLMHTTPError, match=r"OPENAI_API_KEY \(is NOT set\)"):
        client_for(server).complete(MSGS)
    assert len(server.requests) == 1


def test_connection_error_is_retried_then_reported():
    client = OpenAIClient("m", base_url="http://127.0.0.1:9/v1", max_retries=1,
                          backoff_s=0.01, timeout_s=2)
    with pytest.raises(LLMHTTPError, match="cannot reach .*gave up after 2 attempts"):
        client.complete(MSGS)


SCHEMA = {"type": "object", "properties": {"answer": {"type": "integer"}},
          "required": ["answer"], "additionalProperties": False}


def test_json_schema_passthrough(server):
    server.script = [chat_reply('{"answer": 4}')]
    reply = client_for(server).complete(MSGS, json_schema=SCHEMA)
    assert reply.constrained
    fmt = server.requests[0]["body"]["response_format"]
    assert fmt == {"type": "json_schema", "json_schema": {"name": "output", "schema": SCHEMA}}


def test_json_schema_rejected_falls_back_to_plain(server):
    def script(body):
        if "response_format" in body:
            return 400, {"error": {"message": "response_format not supported"}}
        return chat_reply('{"answer": 4}')

    server.script = script
    client = client_for(server)
    reply = client.complete(MSGS, json_schema=SCHEMA)
    assert reply.text == '{"answer": 4}' and not reply.constrained
    assert ["response_format" in r["body"] for r in server.requests] == [True, False]
    client.complete(MSGS, json_schema=SCHEMA)  # remembered: no second rejected attempt
    assert len(server.requests) == 3 and "response_format" not in server.requests[2]["body"]


def test_json_schema_crashing_server_falls_back_after_retries(server):
    def script(body):  # llama_cpp.server answers 500 when it cannot build the grammar
        if "response_format" in body:
            return 500, {"error": {"message": "grammar build failed"}}
        return chat_reply('{"answer": 4}')

    server.script = script
    client = client_for(server, max_retries=1)
    reply = client.complete(MSGS, json_schema=SCHEMA)
    assert reply.text == '{"answer": 4}' and not reply.constrained
    assert ["response_format" in r["body"] for r in server.requests] == [True, True, False]
    assert not client.schema_supported


def test_server_error_on_plain_fallback_is_raised(server):
    server.script = lambda body: (500, {"error": "down"})
    with pytest.raises(LLMHTTPError, match="gave up after 2 attempts"):
        client_for(server, max_retries=1).complete(MSGS, json_schema=SCHEMA)
    assert ["response_format" in r["body"] for r in server.requests] == [True, True, False, False]


def test_structured_reprompts_after_invalid_json(server):
    server.script = [chat_reply("Sure! Here it is: {answer: four}"),
                     chat_reply('```json\n{"answer": "four"}\n```'),
                     chat_reply('The result:\n```json\n{"answer": 4}\n```')]
    value, attempts = complete_structured(client_for(server), MSGS, SCHEMA, retries=2)
    assert value == {"answer": 4}
    assert [a.ok for a in attempts] == [False, False, True]
    assert "answer" in attempts[1].error and "integer" in attempts[1].error
    last = server.requests[2]["body"]["messages"]
    assert last[-2] == {"role": "assistant", "content": '```json\n{"answer": "four"}\n```'}
    assert last[-1]["role"] == "user" and "invalid" in last[-1]["content"]
    assert all("response_format" in r["body"] for r in server.requests)


def test_structured_gives_up_with_all_attempts(server):
    server.script = lambda body: chat_reply("I cannot do that.")
    with pytest.raises(StructuredOutputError) as info:
        complete_structured(client_for(server), MSGS, SCHEMA, retries=1)
    assert len(info.value.attempts) == 2 and len(server.requests) == 2
    assert all(not a.ok for a in info.value.attempts)


def test_make_client_with_cache_and_log(server, tmp_path):
    server.script = [chat_reply("cached answer")]
    log = tmp_path / "llm.jsonl"
    client = make_client("openai:test-model", base_url=server.base_url,
                         cache_dir=tmp_path / "cache", log=log)
    assert isinstance(client, ReplayClient)
    first = client.complete(MSGS)
    second = client.complete(MSGS)  # would fail with an empty script if it hit the server
    assert (first.text, second.text, second.cached) == ("cached answer", "cached answer", True)
    assert len(server.requests) == 1
    records = LLMLog(log).read()
    assert [r["cached"] for r in records] == [False, True]
    assert records[0]["request_hash"] == records[1]["request_hash"] == first.request_hash
