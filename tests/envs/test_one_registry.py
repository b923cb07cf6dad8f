"""The one registry type (backends, judges, policies), and the errors of missing extras.

Why: judges and policies each had their own copy of a registry, backends an if-chain; and
MuJoCo and SAPIEN are extras now, so a missing one must say which extra to install.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from simjudge.envs.backends import BACKENDS, UnknownBackendError, make_backend
from simjudge.envs.registry import MissingExtraError, Registry

ROOT = Path(__file__).resolve().parents[2]


def test_one_registry_type_serves_backends_judges_and_policies():
    from simjudge.judges.registry import JUDGES
    from simjudge.policies.registry import POLICIES

    assert all(isinstance(r, Registry) for r in (BACKENDS, JUDGES, POLICIES))
    assert {"pybullet", "mujoco", "sapien"} <= set(BACKENDS.names())
    assert "privileged" in JUDGES and "oracle" in POLICIES


def test_unknown_names_list_the_choices_and_the_closest():
    with pytest.raises(UnknownBackendError, match="supported backends are .*Did you mean 'mujoco'"):
        make_backend("mujuco")


def test_lazy_factories_import_only_when_made_and_parameters_are_checked():
    things = Registry("thing", error=LookupError)
    things.register("counter", "collections:Counter", "a counter")
    things.register("fraction", "fractions:Fraction", "a fraction")
    assert things.summaries() == {"counter": "a counter", "fraction": "a fraction"}
    assert things.make("fraction", numerator=1, denominator=4) == 0.25
    with pytest.raises(ValueError, match="already registered"):
        things.register("counter", dict)
    with pytest.raises(ValueError, match="letters, digits"):
        things.register("bad name", dict)


def test_a_missing_module_of_an_extra_names_the_extra():
    things = Registry("thing")
    things.register("absent", "simjudge_absent_module_for_the_test:Thing", extra="absent-extra")
    with pytest.raises(MissingExtraError, match=r"pip install 'simjudge\[absent-extra\]'"):
        things.make("absent")


@pytest.mark.parametrize(("backend", "extra"), [("mujoco", "mujoco"), ("sapien", "sapien")])
def test_a_backend_whose_simulator_is_not_installed_names_its_extra(backend, extra):
    code = (f"import sys; sys.modules[{backend!r}] = None  # as if not installed\n"
            "from simjudge.envs.backends import make_backend\n"
            f"make_backend({backend!r})\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode != 0
    assert f"pip install 'simjudge[{extra}]'" in done.stderr, done.stderr[-1500:]
