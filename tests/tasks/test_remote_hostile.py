"""Hostile policy servers (and clients) on loopback: the audit records each failure and goes on.

Every server here is a real ``websockets`` server written in this file; each breaks the
protocol one way (wrong shapes, NaN/inf, non-float dtypes, huge frames, a huge image
resolution or camera count in its metadata, never answering, closing mid-episode, invalid
msgpack, msgpack ext types, a lying array map). One audit runs all of them beside the local
``random`` policy and a well-behaved keyed server, in its own process so that its peak RSS
(``VmHWM`` of its own memory) is its own: every hostile episode must be a recorded failure with
the typed reason, every other episode must be there, the API key must appear nowhere in
the run, and the peak RSS must stay under :data:`RSS_BOUND_MB`.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgpack
import numpy as np
import pytest
import websockets
from websockets.asyncio.server import serve
from websockets.sync.client import connect

from simjudge.policies import PolicyError, make_policy
from simjudge.policies.codec import pack, unpack
from simjudge.policies.server import PolicyServer, check_bind
from simjudge.policies.wire_limits import check_actions, check_metadata

pytestmark = pytest.mark.timeout(120)

RSS_BOUND_MB = 400
"""Peak RSS allowed for the audit process (measured here: about 280 MB with all cases, an
80 MiB frame and 35-46 MiB container bombs among them; 950 MB before the codec counted
decoded elements; the unbounded client rendered 10.7 GB frames for
``image_resolution: [30000, 30000]`` and the audit died)."""
SECRET = "s3cret-Key-0xA7"
META = {"image_resolution": [32, 32], "needs_wrist_camera": False, "n_external_cameras": 0,
        "action_space": "delta-translation"}


def _raw_array(dtype: str, shape: list[int], data: bytes) -> dict[bytes, Any]:
    return {b"__ndarray__": True, b"data": data, b"dtype": dtype, b"shape": shape}


def _actions(value: Any) -> bytes:
    return msgpack.packb({"actions": value}, use_bin_type=True,
                         default=lambda a: _raw_array(a.dtype.str, list(a.shape), a.tobytes()))


# case name -> (metadata, infer reply: bytes, "close", or "stall"; the typed reason expected)
CASES: dict[str, tuple[dict[str, Any], Any, str]] = {
    "wrong_shape": (META, pack({"actions": np.zeros((3, 5))}), "RemoteProtocolError: server .* shape"),
    "nan": (META, pack({"actions": np.full((2, 7), np.nan)}), "RemoteProtocolError: .*non-finite"),
    "inf": (META, pack({"actions": np.full((1, 7), np.inf)}), "RemoteProtocolError: .*non-finite"),
    "datetime": (META, _actions(np.zeros((1, 7), "datetime64[s]")),
                 "RemoteProtocolError: .*dtype datetime64"),
    "ints": (META, pack({"actions": np.zeros((1, 7), np.int64)}), "RemoteProtocolError: .*dtype int64"),
    "complex": (META, _actions(np.zeros((1, 7), np.complex128)), "RemoteProtocolError: .*undecodable"),
    "object": (META, msgpack.packb({"actions": _raw_array("|O", [1, 7], b"\0" * 56)}),
               "RemoteProtocolError: .*undecodable"),
    "lying_shape": (META, msgpack.packb({"actions": _raw_array("<f8", [10**9, 10**9], b"\0" * 8)}),
                    "RemoteProtocolError: .*undecodable"),
    "long_chunk": (META, pack({"actions": np.zeros((5000, 7), np.float32)}),
                   "RemoteProtocolError: .*1 <= N <= 1024"),
    "no_actions": (META, pack({"act": 1}), "RemoteProtocolError: .*without 'actions'"),
    "huge_frame": (META, b"\x00" * (80 * 2**20), "RemoteProtocolError: .*frame over 64 MiB"),
    "huge_resolution": ({**META, "image_resolution": [30000, 30000]}, None,
                        "RemoteProtocolError: .*image_resolution"),
    "huge_cameras": ({**META, "n_external_cameras": 10**9}, None,
                     "RemoteProtocolError: .*n_external_cameras"),
    "huge_metadata": ({**META, "notes": "x" * (8 * 2**20)}, None,
                      "RemoteProtocolError: .*bytes of metadata; at most 1048576"),
    "never_answers": (META, "stall", "RemotePolicyError: .*no answer within 1"),
    "closes_mid_episode": (META, "close", "RemoteConnectionLost: .*closed while answering infer"),
    "closes_after_two_chunks": (META, "close_after_2",
                                "RemoteConnectionLost: .*closed while answering infer"),
    "invalid_msgpack": (META, b"\xc1\xc1\xc1\xc1", "RemoteProtocolError: .*undecodable"),
    "ext_type": (META, msgpack.packb({"actions": msgpack.ExtType(42, b"x" * 64)}),
                 "RemoteProtocolError: .*extension type 42"),
    # small frames that decode to huge containers: 1 byte per element, 8+ bytes per reference
    "array_bomb": (META, msgpack.packb({"actions": [[0] * 60_000] * 800}),
                   "RemoteProtocolError: .*undecodable.*elements"),
    "map_bomb": (META, msgpack.packb({"actions": [{i: 0 for i in range(60_000)}] * 150}),
                 "RemoteProtocolError: .*undecodable.*elements"),
}


class HostileServers:
    """One real websockets server per case, all on one event loop in a thread (loopback)."""

    def __init__(self, cases: dict[str, tuple[dict[str, Any], Any, str]]) -> None:
        self.cases = cases
        self.ports: dict[str, int] = {}
        self._ready = threading.Event()
        self._thread = threading.Thread(target=lambda: asyncio.run(self._main()), daemon=True)

    async def _main(self) -> None:
        self._stop = asyncio.get_running_loop().create_future()
        servers = []
        for name, (metadata, reply, _) in self.cases.items():
            server = await serve(self._handler(metadata, reply), "127.0.0.1", 0, max_size=None,
                                 compression=None)
            self.ports[name] = next(iter(server.sockets)).getsockname()[1]
            servers.append(server)
        self._ready.set()
        await self._stop
        for server in servers:
            server.close()

    def _handler(self, metadata: dict[str, Any], reply: Any) -> Callable[[Any], Any]:
        async def handle(ws: Any) -> None:
            await ws.send(pack(metadata))
            answered = 0
            async for frame in ws:
                if unpack(frame).get("endpoint") == "reset":
                    await ws.send("reset successful")
                elif reply == "close_after_2" and answered < 2:  # two good chunks, then gone
                    answered += 1
                    await ws.send(pack({"actions": np.zeros((1, 7), np.float32)}))
                elif reply in ("close", "close_after_2"):
                    await ws.close()
                    return
                elif reply == "stall":
                    await asyncio.sleep(30)
                else:
                    await ws.send(reply)
        return handle

    def __enter__(self) -> HostileServers:
        self._thread.start()
        assert self._ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.get_loop().call_soon_threadsafe(lambda: self._stop.done() or self._stop.set_result(None))
        self._thread.join(10)


AUDIT = """
import json, resource, sys
from simjudge.pipelines.audit import run_audit
from simjudge.pipelines.audit.config import AuditConfig
policies, out = json.loads(sys.argv[1]), sys.argv[2]
audit = run_audit(AuditConfig(policy=tuple(policies), tasks=("OpenDrawer-v0",), seeds=2, horizon=4,
                              epsilon=0.01, videos=0, executor="serial", out=out), progress=False)
# the peak RSS of this process's own memory (VmHWM): ru_maxrss keeps the high-water mark of
# the parent's memory across fork and exec, so after a test that grew pytest it reads that
hwm = [line for line in open("/proc/self/status") if line.startswith("VmHWM:")]
rss_kb = int(hwm[0].split()[1]) if hwm else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"episodes": audit["episodes"], "failed": audit["failed_jobs"],
                  "rss_mb": rss_kb / 1024}))
"""


@pytest.fixture(scope="module")
def hostile_audit(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[dict[str, Any], Path, str]]:
    out = tmp_path_factory.mktemp("hostile") / "run"
    with HostileServers(CASES) as hostile, PolicyServer(make_policy("random"), port=0,
                                                        api_key=SECRET) as keyed:
        policies = ["rnd=random", f"keyed=remote:ws://127.0.0.1:{keyed.port}?api_key={SECRET}"]
        # a short timeout only where the wait is the case: a loaded machine must not turn
        # another case into a time-out
        policies += [f"{name}=remote:ws://127.0.0.1:{port}?timeout={1 if name == 'never_answers' else 15}"
                     "&retries=0" for name, port in hostile.ports.items()]
        start = time.monotonic()
        proc = subprocess.run([sys.executable, "-c", AUDIT, json.dumps(policies), str(out)],
                              capture_output=True, text=True, timeout=110,
                              env={**os.environ, "PYTHONWARNINGS": "ignore"})
        seconds = time.monotonic() - start
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    result["seconds"] = seconds
    yield result, out, proc.stdout + proc.stderr


def test_every_hostile_episode_is_a_typed_failure_and_the_rest_are_there(hostile_audit):
    result, out, _ = hostile_audit
    audit = json.loads((out / "audit.json").read_text())
    assert result["episodes"] == audit["episodes"] == 4  # rnd and keyed, 2 seeds each
    assert sorted({f"{e['policy']}" for e in _results(out) if not e.get("job_failed")}) == ["keyed", "rnd"]
    reasons = {f["key"]: f["reason"] for f in audit["failed_jobs"]}
    assert len(reasons) == 2 * len(CASES)
    for name, (_, _, expected) in CASES.items():
        for seed in (0, 1):
            reason = reasons[f"{name}__OpenDrawer-v0__s{seed:03d}"]
            assert re.search(expected, reason), (name, reason[-600:])


def test_peak_rss_of_the_hostile_audit_is_bounded(hostile_audit):
    result, _, _ = hostile_audit
    print(f"hostile audit: peak RSS {result['rss_mb']:.0f} MB, {result['seconds']:.1f} s")
    assert 0 < result["rss_mb"] < RSS_BOUND_MB


def test_the_api_key_is_recorded_nowhere(hostile_audit):
    _, out, output = hostile_audit
    assert SECRET not in output
    files = [p for p in out.rglob("*") if p.is_file()]
    assert any(p.name == "report.html" for p in files) and any(p.name == "config.json" for p in files)
    for path in files:
        assert SECRET.encode() not in path.read_bytes(), path
    config = json.loads((out / "config.json").read_text())
    assert "api_key=***" in config["policies"]["keyed"]
    keyed = [e for e in _results(out) if e.get("policy") == "keyed"]
    assert keyed and all("api_key=***" in e["spec"] for e in keyed)


def _results(out: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) | {"key": p.stem} for p in sorted((out / "results").glob("*.json"))]


# -------------------------------------------------------------------- the server side


@pytest.fixture
def random_server() -> Iterator[PolicyServer]:
    with PolicyServer(make_policy("random"), port=0, max_frame_mb=1) as server:
        yield server


BAD_REQUESTS: dict[str, bytes | str] = {
    "text frame": "infer please",
    "invalid msgpack": b"\xc1\xc1",
    "ext type": msgpack.packb({"endpoint": "infer", "x": msgpack.ExtType(7, b"a")}),
    "not a map": pack([1, 2, 3]),
    "unknown endpoint": pack({"endpoint": "shutdown"}),
    "datetime state": pack({"observation/state": np.zeros(4, "datetime64[s]")}),
    "NaN joints": pack({"observation/joint_position": np.full(7, np.nan)}),
    "wrong joint count": pack({"observation/joint_position": np.zeros(3)}),
    "huge image": pack({"observation/wrist_image_left": np.zeros((4000, 1, 3), np.uint8)}),
    "float image": pack({"observation/exterior_image_1_left": np.zeros((8, 8, 3))}),
    "prompt not text": pack({"prompt": 5}),
    "bad reset seed": pack({"endpoint": "reset", "seed": -1}),
    "complex state": msgpack.packb({"observation/state": _raw_array("<c16", [1], b"\0" * 16)}),
}


@pytest.mark.parametrize("what", sorted(BAD_REQUESTS))
def test_serve_answers_a_bad_request_with_an_error_frame_never_actions(random_server, what):
    with connect(random_server.url, max_size=2**20) as ws:
        assert isinstance(unpack(ws.recv(timeout=5)), dict)  # metadata
        ws.send(BAD_REQUESTS[what])
        reply = ws.recv(timeout=5)
        assert isinstance(reply, str) and "Error" in reply, reply
        with pytest.raises(websockets.ConnectionClosed):
            ws.recv(timeout=5)
    with connect(random_server.url) as ws:  # the server is still up for the next client
        ws.recv(timeout=5)
        ws.send(pack({"observation/state": np.zeros(4, np.float32), "prompt": "p"}))
        assert unpack(ws.recv(timeout=5))["actions"].shape == (1, 7)


def test_serve_refuses_a_frame_over_its_limit_and_serves_others_meanwhile(random_server):
    with connect(random_server.url) as other:
        other.recv(timeout=5)
        with connect(random_server.url, max_size=2**20) as ws:
            ws.recv(timeout=5)
            start = time.monotonic()
            with pytest.raises(websockets.ConnectionClosed) as info:
                ws.send(b"\x00" * (8 * 2**20))  # 8 MiB against --max-frame-mb 1
                ws.recv(timeout=5)
            assert info.value.rcvd is not None and info.value.rcvd.code == 1009
            assert time.monotonic() - start < 5
        other.send(pack({"prompt": "p"}))
        assert unpack(other.recv(timeout=5))["actions"].shape == (1, 7)


def test_serve_refuses_an_open_host_without_a_key():
    with pytest.raises(PolicyError, match="--api-key KEY .* or --insecure"):
        check_bind("0.0.0.0", 8000, None, False)
    with pytest.raises(PolicyError, match="--api-key"):
        PolicyServer(make_policy("random"), host="192.168.1.7", port=0)
    check_bind("0.0.0.0", 8000, "k", False)
    check_bind("0.0.0.0", 8000, None, True)
    for host in ("127.0.0.1", "localhost", "::1", "127.0.0.2"):
        check_bind(host, 8000, None, False)
    with pytest.raises(PolicyError, match="1..65535"):
        check_bind("127.0.0.1", 99999, None, False)


def test_the_key_check_is_constant_time_and_exact():
    import inspect

    from simjudge.policies import server

    assert "hmac.compare_digest" in inspect.getsource(server.PolicyServer._process_request)
    with PolicyServer(make_policy("random"), port=0, api_key=SECRET) as keyed:
        for wrong in (SECRET[:-1], SECRET + "x", "", SECRET.upper()):
            with pytest.raises(websockets.InvalidStatus):
                connect(keyed.url, additional_headers={"Authorization": f"Api-Key {wrong}"})
        with connect(keyed.url, additional_headers={"Authorization": f"Api-Key {SECRET}"}) as ws:
            assert isinstance(unpack(ws.recv(timeout=5)), dict)


# ------------------------------------------------------------------- the checks alone


@pytest.mark.parametrize("value", [
    np.zeros((1, 7), "datetime64[s]"), np.zeros((1, 7), object), np.zeros((1, 7), np.complex64),
    np.zeros((1, 7), bool), np.zeros((2, 6)), np.zeros((0, 7)), np.zeros((2, 7, 1)),
    np.array([[np.nan] * 7]), np.array([[-np.inf] * 7]), "actions", None, {"a": 1},
    [[1, 2, 3, 4, 5, 6, 7]],
])
def test_actions_that_are_not_real_floats_of_the_declared_shape_are_errors(value):
    with pytest.raises(PolicyError):
        check_actions(value, 7, "srv")


def test_real_float_actions_pass_unchanged():
    chunk = np.arange(14, dtype=np.float32).reshape(2, 7)
    out = check_actions(chunk, 7, "srv")
    assert out.dtype == np.float64 and np.array_equal(out, chunk)
    assert check_actions([0.5] * 8, 8, "srv").shape == (1, 8)


@pytest.mark.parametrize("metadata", [
    [1], {"image_resolution": [30000, 30000]}, {"image_resolution": [0, 10]},
    {"image_resolution": [224]}, {"image_resolution": "224x224"}, {"image_resolution": [True, 2]},
    {"image_resolution": [224.5, 224]}, {"n_external_cameras": -1}, {"n_external_cameras": 2**40},
    {"action_space": 3},
])
def test_metadata_numbers_out_of_bounds_are_errors(metadata):
    with pytest.raises(PolicyError):
        check_metadata(metadata, "srv")


def test_a_remote_spec_with_bad_limits_fails_before_connecting():
    for query, message in (("max_frame_mb=0", "max_frame_mb"), ("max_frame_mb=abc", "max_frame_mb"),
                           ("timeout=-1", "timeout"), ("retries=x", "retries")):
        start = time.monotonic()
        with pytest.raises(PolicyError, match=message):
            make_policy(f"remote:ws://127.0.0.1:9?{query}&api_key={SECRET}")
        assert time.monotonic() - start < 1
    with pytest.raises(PolicyError) as info:
        make_policy(f"remote:http://x?api_key={SECRET}")
    assert SECRET not in str(info.value) and "api_key=***" in str(info.value)


def test_an_arena_with_a_keyed_remote_policy_records_the_key_nowhere(tmp_path, capsys):
    from simjudge.cli import main

    out = tmp_path / "arena"
    with PolicyServer(make_policy("random"), port=0, api_key=SECRET) as keyed:
        code = main(["arena", "run", "--policy", f"k=remote:ws://127.0.0.1:{keyed.port}?api_key={SECRET}",
                     "--policy", "z=zero", "--tasks", "OpenDrawer-v0", "--matches", "2", "--horizon", "4",
                     "--episodes", "--executor", "serial", "--out", str(out)])
        assert keyed.requests > 0  # the key was sent and accepted: matches were played
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert SECRET not in captured.out + captured.err
    files = [p for p in out.rglob("*") if p.is_file()]
    assert any(p.name == "arena.sqlite" for p in files) and any(p.name == "report.html" for p in files)
    for path in files:
        assert SECRET.encode() not in path.read_bytes(), path
    assert "api_key=***" in json.loads((out / "config.json").read_text())["policies"]["k"]


def test_the_frame_limit_is_the_specs_or_the_audits():
    from simjudge.policies import PolicyTask
    from simjudge.policies.remote import RemoteProtocolError, with_frame_limit

    big = {"big": (META, pack({"actions": np.zeros((1, 7)), "pad": b"\0" * (3 * 2**20)}), "")}
    with HostileServers(big) as server:
        url = f"remote:ws://127.0.0.1:{server.ports['big']}?timeout=10"
        obs = {"state": np.zeros(3, np.float32), "prompt": "p"}
        policy = make_policy(with_frame_limit(url, 2))  # the audit's --max-frame-mb 2
        policy.reset(PolicyTask("x", prompt="p"), 0)
        with pytest.raises(RemoteProtocolError, match="frame over 2 MiB"):
            policy.act(obs)
        policy.close()
        spec = with_frame_limit(f"{url}&max_frame_mb=8", 2)  # the spec's own limit wins
        assert spec.endswith("max_frame_mb=8")
        policy = make_policy(spec)
        policy.reset(PolicyTask("x", prompt="p"), 0)
        assert policy.act(obs).shape == (1, 7)
        policy.close()
    assert with_frame_limit("random", 2) == "random"
    assert with_frame_limit("ws://h:1", 2.5) == "ws://h:1?max_frame_mb=2.5"


def test_credentials_in_the_url_stay_out_of_messages_and_records():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(PolicyError, match="cannot reach") as info:  # nothing listens there
        make_policy(f"remote:ws://me:{SECRET}@127.0.0.1:{port}?timeout=1")
    assert SECRET not in str(info.value) and "ws://***@127.0.0.1" in str(info.value)
    with PolicyServer(make_policy("random"), port=0) as server:
        policy = make_policy(f"remote:ws://me:{SECRET}@127.0.0.1:{server.port}?api_key={SECRET}")
        assert SECRET not in json.dumps(policy.info.to_dict())
        policy.close()


def test_serve_caps_open_connections_and_frees_the_slot_on_close():
    with PolicyServer(make_policy("random"), port=0, max_connections=2) as server:
        with connect(server.url) as first, connect(server.url) as second:
            first.recv(timeout=5)
            second.recv(timeout=5)
            with pytest.raises(websockets.InvalidStatus, match="503"):
                connect(server.url, open_timeout=5)
        deadline = time.monotonic() + 5
        while server._open and time.monotonic() < deadline:  # the handlers notice the closes
            time.sleep(0.02)
        with connect(server.url) as third:
            assert isinstance(unpack(third.recv(timeout=5)), dict)
    with pytest.raises(PolicyError, match="max-connections"):
        PolicyServer(make_policy("random"), port=0, max_connections=0)
