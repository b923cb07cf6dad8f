"""One exception root: every exception class simjudge defines derives from ``SimjudgeError``.

The module list comes from ``[tool.setuptools.package-dir]`` in pyproject.toml (the same
mapping the install uses), so a new module or a new error class is covered without an edit
here.
"""

from __future__ import annotations

import importlib
import pickle
import tomllib
from pathlib import Path

import pytest

import simjudge
from simjudge.envs.errors import SimjudgeError

ROOT = Path(__file__).resolve().parent.parent


def package_modules() -> list[str]:
    """The import name of every module of the installed package."""
    with open(ROOT / "pyproject.toml", "rb") as f:
        mapping = tomllib.load(f)["tool"]["setuptools"]["package-dir"]
    names = []
    for package, folder in mapping.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
            if "__pycache__" in parts:
                continue
            if parts[-1] == "__init__":
                parts.pop()
            names.append(".".join([package, *parts]))
    return names


def simjudge_exceptions() -> list[type[BaseException]]:
    """Every BaseException subclass defined in a simjudge module (nested ones included)."""
    for name in package_modules():
        importlib.import_module(name)
    found, todo = set(), [BaseException]
    while todo:
        cls = todo.pop()
        for sub in cls.__subclasses__():
            if sub not in found:
                found.add(sub)
                todo.append(sub)
    return sorted((c for c in found if c.__module__.split(".")[0] == "simjudge"),
                  key=lambda c: f"{c.__module__}.{c.__qualname__}")


def test_every_module_is_found():
    names = package_modules()
    assert "simjudge.envs.errors" in names and "simjudge.llm.base" in names
    assert len(names) > 100


def test_every_exception_derives_from_simjudge_error():
    classes = simjudge_exceptions()
    assert len(classes) >= 25, [c.__qualname__ for c in classes]
    stray = [f"{c.__module__}.{c.__qualname__}" for c in classes
             if not issubclass(c, SimjudgeError | Warning)]  # warnings are not errors
    assert not stray, f"derive these from simjudge.envs.errors.SimjudgeError: {stray}"


@pytest.mark.parametrize(("module", "name", "builtin"), [
    ("simjudge.envs.scene", "SceneConfigError", ValueError),
    ("simjudge.envs.state_api", "UnknownNameError", LookupError),
    ("simjudge.envs.catalogue", "UnknownAssetError", KeyError),
    ("simjudge.envs.backends.base", "BackendError", RuntimeError),
    ("simjudge.envs.scene_builder", "SceneBuildError", RuntimeError),
    ("simjudge.skills.ompl_solve", "OMPLNotInstalledError", ImportError),
    ("simjudge.llm.base", "LLMDependencyError", ImportError),
    ("simjudge.llm.replay", "ReplayMissError", KeyError),
    ("simjudge.tasks.spec.task", "TaskSpecError", ValueError),
    ("simjudge.pipelines.pool_seed", "PoolError", ValueError),
    ("simjudge.judges.base", "JudgeResetNeeded", RuntimeError),
])
def test_builtin_bases_are_kept(module, name, builtin):
    cls = getattr(importlib.import_module(module), name)
    assert issubclass(cls, SimjudgeError) and issubclass(cls, builtin)


def test_unknown_name_is_still_a_lookup_error():
    from simjudge.envs.state_api import UnknownNameError

    with pytest.raises(LookupError, match="Did you mean 'drawer'"):
        raise UnknownNameError("object", "drawr", ["drawer", "cube"])


def test_generated_code_errors_still_pickle():
    from simjudge.envs.codegen.errors import CodeTimeoutError, GeneratedCodeError

    err = pickle.loads(pickle.dumps(CodeTimeoutError("step budget exceeded", 3)))
    assert isinstance(err, GeneratedCodeError) and isinstance(err, SimjudgeError)
    assert (err.message, err.line, str(err)) == ("step budget exceeded", 3,
                                                  "line 3: step budget exceeded")


def test_public_api_exports_the_root():
    assert simjudge.SimjudgeError is SimjudgeError
    assert "SimjudgeError" in simjudge.__all__
