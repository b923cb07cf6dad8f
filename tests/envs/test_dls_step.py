"""The IK step (``simjudge.envs.dls``, and its optional compiled twin ``envs/_dls.c``)
against its numpy formulas, each other, and its input checks.

Why: the env's IK runs through the step every control step, on every backend. It must be the
damped-least-squares step with posture pull and joint clamping (the numpy reference in
``ik_steps.py``, to rounding), give the same bits on every call and from either
implementation (so trajectories do not depend on whether a compiler was there at install
time), accept the Jacobian layouts the backends return, and refuse bad input with an error
that says what is wrong instead of writing garbage.
"""

from __future__ import annotations

import numpy as np
import pytest

from simjudge.envs import dls as _python_step

try:
    from simjudge.envs import _dls as _compiled_step
except ImportError:  # no compiler at install time: the Python step alone
    _compiled_step = None

from simjudge.envs.robot import _POSTURE_GAIN, _POSTURE_MARGIN, HOME_QPOS
from tests.envs.ik_steps import numpy_step

IMPLEMENTATIONS = [pytest.param(_python_step, id="python"), pytest.param(
    _compiled_step, id="compiled",
    marks=pytest.mark.skipif(_compiled_step is None, reason="envs/_dls.c not built"))]
LOWER = np.array([-2.9, -1.76, -2.9, -3.07, -2.9, -0.02, -2.9])
UPPER = np.array([2.9, 1.76, 2.9, -0.07, 2.9, 3.75, 2.9])


def _bounds(lower=LOWER, upper=UPPER) -> np.ndarray:
    return np.stack([lower + _POSTURE_MARGIN, upper - _POSTURE_MARGIN, lower, upper, HOME_QPOS])


def _unit(v) -> list[float]:
    v = np.asarray(v, float)
    return (v / np.linalg.norm(v)).tolist()


def _case(rng, spread: float):
    jac = rng.normal(scale=0.5, size=(6, 7))
    q0 = HOME_QPOS + rng.normal(scale=spread, size=7)
    position = rng.uniform(-0.5, 0.5, size=3).tolist()
    orientation = _unit(rng.normal(size=4))
    target = (np.array(position) + rng.normal(scale=0.05, size=3)).tolist()
    target_orientation = _unit(np.array(orientation) + rng.normal(scale=0.3, size=4))
    return jac, q0, position, orientation, target, target_orientation


def _step(_dls, jac, q0, position, orientation, target, target_orientation, bounds=None, damping=0.05):
    out = np.empty(7)
    _dls.step(jac, q0, position, orientation, target, target_orientation, damping,
              _bounds() if bounds is None else bounds, _POSTURE_GAIN, out)
    return out


@pytest.mark.parametrize("impl", IMPLEMENTATIONS)
@pytest.mark.parametrize("spread", [0.1, 1.0, 3.0])  # inside the range, near limits, outside
def test_the_step_is_the_numpy_step(spread, impl):
    rng = np.random.default_rng(int(spread * 10))
    kinds = {"plain": 0, "pulled": 0, "clamped": 0}
    for _ in range(300):
        case = _case(rng, spread)
        expected = numpy_step(*case, LOWER, UPPER)
        np.testing.assert_allclose(_step(impl, *case), expected, rtol=0, atol=1e-9)
        q0 = case[1]
        near = np.any((q0 < LOWER + _POSTURE_MARGIN) | (q0 > UPPER - _POSTURE_MARGIN))
        clamped = np.any((expected <= LOWER) | (expected >= UPPER))
        kinds["clamped" if clamped else "pulled" if near else "plain"] += 1
    assert kinds["plain" if spread < 0.5 else "clamped"] > 0, kinds  # the branches ran


@pytest.mark.parametrize("impl", IMPLEMENTATIONS)
def test_same_input_same_bits_and_every_jacobian_layout(impl):
    rng = np.random.default_rng(3)
    jac, *rest = _case(rng, 1.0)
    first = _step(impl, jac, *rest)
    assert _step(impl, jac, *rest).tobytes() == first.tobytes()
    wide = np.zeros((6, 9))
    wide[:, :7] = jac  # the backends' Jacobians carry the finger columns after the arm's
    for layout in (np.asfortranarray(jac), wide, wide[:, :7], np.ascontiguousarray(jac)):
        assert _step(impl, layout, *rest).tobytes() == first.tobytes()
    q_all = np.concatenate([rest[0], [0.01, 0.01]])  # joints read with the fingers
    assert _step(impl, jac, q_all, *rest[1:]).tobytes() == first.tobytes()


@pytest.mark.parametrize("impl", IMPLEMENTATIONS)
def test_a_nan_target_gives_nan_joint_targets(impl):
    rng = np.random.default_rng(4)
    jac, q0, position, orientation, target, target_orientation = _case(rng, 0.1)
    q = _step(impl, jac, q0, position, orientation, [np.nan, 0.0, 0.0], target_orientation)
    assert np.isnan(q).any()


@pytest.mark.parametrize(
    ("change", "error", "match"),
    [
        ({"damping": 0.0}, ValueError, "damping must be > 0"),
        ({"damping": float("nan")}, ValueError, "damping must be > 0"),
        ({"jac": np.zeros((3, 7))}, ValueError, "jacobian must be a 6-row"),
        ({"jac": np.zeros((6, 7), dtype=np.float32)}, ValueError, "jacobian must be a 6-row"),
        ({"jac": [[0.0] * 7] * 6}, TypeError, "jacobian must be a float64 numpy array"),
        ({"q0": np.zeros(5)}, ValueError, "q must be a 1-D float64 array of at least 7"),
        ({"target": [0.0, 0.0]}, ValueError, "target must hold 3 numbers, not 2"),
        ({"orientation": "wxyz"}, TypeError, "orientation must hold numbers"),
        ({"bounds": np.zeros((4, 7))}, ValueError, "bounds must be a 5-row"),
        ({"out": np.zeros(14)[::2]}, None, None),  # a strided writable array is fine
    ],
)
@pytest.mark.parametrize("impl", IMPLEMENTATIONS)
def test_bad_input_is_refused_with_what_is_wrong(change, error, match, impl):
    rng = np.random.default_rng(5)
    jac, q0, position, orientation, target, target_orientation = _case(rng, 0.1)
    args = {"jac": jac, "q0": q0, "position": position, "orientation": orientation,
            "target": target, "target_orientation": target_orientation, "damping": 0.05,
            "bounds": _bounds(), "out": np.empty(7)} | change
    call = lambda: impl.step(args["jac"], args["q0"], args["position"], args["orientation"],  # noqa: E731
                             args["target"], args["target_orientation"], args["damping"],
                             args["bounds"], _POSTURE_GAIN, args["out"])
    if error is None:
        call()
        return
    with pytest.raises(error, match=match):
        call()


@pytest.mark.parametrize("impl", IMPLEMENTATIONS)
def test_a_read_only_output_is_refused(impl):
    rng = np.random.default_rng(6)
    out = np.empty(7)
    out.setflags(write=False)
    with pytest.raises(TypeError, match="out must be a writable float64 numpy array"):
        impl.step(*_case(rng, 0.1), 0.05, _bounds(), _POSTURE_GAIN, out)


@pytest.mark.skipif(_compiled_step is None, reason="envs/_dls.c not built")
@pytest.mark.parametrize("spread", [0.1, 1.0, 3.0])
def test_the_python_step_and_the_compiled_one_agree_bit_for_bit(spread):
    rng = np.random.default_rng(100 + int(spread * 10))
    for _ in range(500):
        case = _case(rng, spread)
        damping = float(rng.uniform(0.01, 0.2))
        python = _step(_python_step, *case, damping=damping)
        compiled = _step(_compiled_step, *case, damping=damping)
        assert python.tobytes() == compiled.tobytes(), (case, python, compiled)


def test_the_env_uses_the_compiled_step_only_when_it_is_built():
    from simjudge.envs import robot

    assert robot._dls is (_compiled_step if _compiled_step is not None else _python_step)


def test_recorded_episodes_hold_without_the_compiled_step():
    """The recorded episodes of every backend, in a process where ``_dls`` cannot be imported."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    code = ("import sys; sys.modules['simjudge.envs._dls'] = None\n"
            "from simjudge.envs import robot, dls\n"
            "assert robot._dls is dls, robot._dls\n"
            "import pytest\n"
            "sys.exit(pytest.main(['-q', '-p', 'no:cacheprovider', "
            "'tests/envs/test_step_speed_trajectory.py']))\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and "failed" not in done.stdout
