"""One OMPL solve over a box of joint positions, through the OMPL 2.x Python bindings.

Why apart from :mod:`~simjudge.skills.planning`: this is the only code that
touches OMPL's API (which changed between 1.x and the 2.x wheels: nanobind
bindings, states indexed by slices, ``RNG.setSeed`` in ``ompl.util``), and OMPL
is an optional dependency imported on first use.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np

from simjudge.envs.errors import SimjudgeError

if TYPE_CHECKING:  # pragma: no cover
    from .planning import PlannerConfig

__all__ = ["OMPLNotInstalledError", "import_ompl", "solve_joint_path"]


class OMPLNotInstalledError(SimjudgeError, ImportError):
    """OMPL's Python bindings are missing; the message gives the install command."""


def import_ompl() -> tuple[ModuleType, ModuleType, ModuleType]:
    """OMPL's ``base``, ``geometric`` and ``util`` modules, imported on first use.

    Raises:
        OMPLNotInstalledError: The ``ompl`` package is not installed.
    """
    try:
        from ompl import base, geometric, util
    except ImportError as exc:
        raise OMPLNotInstalledError(
            "motion planning needs OMPL's Python bindings (ompl>=2.0); install them with "
            "`pip install simjudge[ompl]` (or `pip install ompl`)"
        ) from exc
    return base, geometric, util


class _OmplLog:
    """Quiet OMPL's console log (debug by default in the 2.x wheel) while planning."""

    def __init__(self, util: ModuleType) -> None:
        self.util = util

    def __enter__(self) -> _OmplLog:
        self.previous = self.util.getLogLevel()
        self.util.setLogLevel(self.util.LOG_WARN)
        return self

    def __exit__(self, *exc: object) -> None:
        self.util.setLogLevel(self.previous)

    def seed(self, seed: int) -> None:
        # OMPL logs an error when reseeding after first use; reseeding still fixes
        # every sampler allocated afterwards, which is all a fresh problem uses.
        self.util.setLogLevel(self.util.LOG_NONE)
        self.util.RNG.setSeed(int(seed) % 2_147_483_646 + 1)
        self.util.setLogLevel(self.util.LOG_WARN)


def _make_planner(og: ModuleType, si: Any, name: str) -> Any:
    if name == "rrtconnect":
        planner = og.RRTConnect(si)
        planner.setRange(1.0)
        return planner
    planner = og.BITstar(si)
    planner.setStopOnSolnImprovement(True)  # stop at the first solution: seed-determined
    return planner


def solve_joint_path(
    is_valid: Callable[[np.ndarray], bool],
    lower: np.ndarray,
    upper: np.ndarray,
    start: np.ndarray,
    goal: np.ndarray,
    config: PlannerConfig,
    seed: int,
) -> tuple[np.ndarray | None, str]:
    """Plan from ``start`` to ``goal`` inside ``[lower, upper]`` with OMPL.

    Everything (space, sampler, planner, simplifier) is allocated after seeding,
    so the same seed and validity function give the same waypoints.

    Args:
        is_valid: State validity (joint vector -> bool).
        lower: Joint lower limits.
        upper: Joint upper limits.
        start: Start configuration.
        goal: Goal configuration.
        config: Planner settings (planner, budgets, resolution, simplification).
        seed: OMPL's random seed.

    Returns:
        The (simplified) waypoints ``(n, dim)`` from start to goal, or None, and
        OMPL's status string.
    """
    ob, og, ou = import_ompl()
    dim = len(start)
    with _OmplLog(ou) as log:
        log.seed(seed)
        space = ob.RealVectorStateSpace(dim)
        bounds = ob.RealVectorBounds(dim)
        for i in range(dim):
            bounds.setLow(i, float(lower[i]))
            bounds.setHigh(i, float(upper[i]))
        space.setBounds(bounds)
        si = ob.SpaceInformation(space)
        si.setStateValidityChecker(lambda s: is_valid(np.array(s[0:dim])))
        si.setStateValidityCheckingResolution(config.motion_resolution / space.getMaximumExtent())
        si.setup()
        ss = og.SimpleSetup(si)
        s, g = si.allocState(), si.allocState()
        s[0:dim] = [float(x) for x in start]
        g[0:dim] = [float(x) for x in goal]
        ss.setStartAndGoalStates(s, g)
        planner = _make_planner(og, si, config.planner)
        ss.setPlanner(planner)
        status = ss.solve(config.time_limit_s)
        if config.planner == "bitstar" and config.refine_time_s > 0 and ss.haveExactSolutionPath():
            planner.setStopOnSolnImprovement(False)
            ss.solve(config.refine_time_s)
        if not ss.haveExactSolutionPath():
            return None, status.asString()
        path = ss.getSolutionPath()
        if config.simplify:
            # Rope shortcutting then vertex reduction: in measurements as short as
            # simplifyMax (4.7 vs 4.9 rad) at a fifth of its validity checks, and
            # free of wall-clock limits, so the result depends only on the seed.
            simplifier = og.PathSimplifier(si)
            simplifier.ropeShortcutPath(path)
            simplifier.reduceVertices(path)
        waypoints = np.array([st[0:dim] for st in path.getStates()], dtype=float)
    waypoints[0], waypoints[-1] = start, goal
    return waypoints, status.asString()
