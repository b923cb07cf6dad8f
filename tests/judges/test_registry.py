"""The judge registry: spec parsing with types, errors that list the options."""

from __future__ import annotations

import pytest

from simjudge.judges import (
    DegradedNoisyJudge,
    Judge,
    PrivilegedProgressJudge,
    make_judge,
    parse_judge_spec,
    register_judge,
    registered_judges,
)

BUILT_IN = {"privileged", "noisy", "quantized", "pairwise", "rule", "code-reward", "code-success"}


def test_built_in_names_are_registered():
    assert BUILT_IN <= set(registered_judges())
    assert all(registered_judges()[n] for n in BUILT_IN)


def test_specs_parse_with_types():
    assert parse_judge_spec("privileged") == ("privileged", {})
    name, params = parse_judge_spec(
        "x: a=0.05, b=4, c=true, d=None, e='s,t', f=word, g={'k': 1, 'j': [2, 3]}"
    )
    assert name == "x"
    assert params == {"a": 0.05, "b": 4, "c": True, "d": None, "e": "s,t", "f": "word",
                      "g": {"k": 1, "j": [2, 3]}}  # fmt: skip
    assert isinstance(params["b"], int)
    with pytest.raises(ValueError, match="key=value"):
        parse_judge_spec("noisy:0.05")
    with pytest.raises(ValueError, match="twice"):
        parse_judge_spec("noisy:sigma=1,sigma=2")


def test_make_judge_builds_configured_judges():
    noisy = make_judge("noisy:sigma=0.05,seed=7")
    assert isinstance(noisy, DegradedNoisyJudge) and (noisy.sigma, noisy.seed) == (0.05, 7)
    assert noisy.spec == "noisy:sigma=0.05,seed=7"
    assert make_judge("quantized:levels=4").levels == 4
    goal = make_judge("privileged:goal={'object': 'Cabinet', 'link': 'link_0'}")
    assert isinstance(goal, PrivilegedProgressJudge) and goal.goal_spec["link"] == "link_0"
    assert make_judge("rule").name == "rule"
    overridden = make_judge("noisy", sigma=0.2)
    assert overridden.sigma == 0.2 and overridden.spec is None


def test_unknown_names_and_parameters_list_the_options():
    with pytest.raises(KeyError, match=r"unknown judge 'noisey'.*registered judges are.*'noisy'"):
        make_judge("noisey")
    with pytest.raises(TypeError, match=r"takes no parameter\(s\) \['sgima'\]; it takes \['sigma'"):
        make_judge("noisy:sgima=0.1")


def test_register_a_custom_judge():
    class Always(Judge):
        """Always succeeds."""

        name = "always"

    register_judge("test-always", Always, replace=True)
    assert registered_judges()["test-always"] == "Always succeeds."
    assert isinstance(make_judge("test-always"), Always)
    with pytest.raises(ValueError, match="already registered"):
        register_judge("test-always", Always)
    with pytest.raises(ValueError, match="letters"):
        register_judge("bad name", Always)
