"""OPD metrics of a dense progress potential: MC, MP, PPL, CRA, STR, and their reports.

Formulas from "PRM-as-a-Judge: A Dense Evaluation Paradigm for Fine-Grained Robotic
Auditing" (``docs/methods.md`` (opd)). An episode is scored from its potentials Φ_0..Φ_T ∈ [0, 1]
with d_t = Φ_t − Φ_{t−1}, TV = Σ|d_t| and M_t = max_{k≤t} Φ_k:

* MC  = max{q ∈ {0, 1/K, ..., 1} : ∃t Φ_t ≥ q}   (Milestone Coverage, higher is better)
* MP  = max_t Φ_t                                  (Max Progress, higher is better)
* PPL = Φ_T · max(Φ_T − Φ_0, 0) / (TV + δ)         (Path-weighted Progress Length, higher)
* CRA = (1/(T+1)) Σ_{t=0..T} (M_t − Φ_t)           (Cumulative Regret Area, lower)
* STR = (1/T) Σ_{t=1..T} 1(|d_t| < ε)              (Stagnation Ratio, lower)

Conventions chosen here:

* MC compares MP with the float edges ``j / K`` themselves (no tolerance): MC == q exactly
  when MP == q, and an MP below an edge, however close, falls in the bin below. This is
  ⌊K·MP⌋/K without the rounding error of the product ``K * MP``.
* One value (T = 0) is a valid episode: MC, MP from Φ_0; TV = 0 so PPL = 0; CRA = 0; and
  STR = 0 (no transition, nothing stagnated).
* STR and CRA depend on the frame rate and on post-success padding: record both, with ε.

Example:
    >>> m = opd_metrics([0.0, 0.3, 0.2, 0.6], epsilon=0.01)
    >>> m.mc, m.mp, round(m.cra, 3), m.str_
    (0.5, 0.6, 0.025, 0.0)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

__all__ = [
    "DELTA",
    "FAILURE_TYPES",
    "MC_THRESHOLDS",
    "FailureFingerprint",
    "OPDMetrics",
    "StreamingOPD",
    "calibrate_epsilon",
    "failure_fingerprints",
    "format_markdown_table",
    "mc_at_k",
    "milestone_coverage",
    "opd_metrics",
    "opd_scorer",
    "progress",
    "streamed_opd_metrics",
    "summarize_episodes",
]

DELTA = 1e-8
"""δ in the PPL denominator (the paper's value)."""

MC_THRESHOLDS: tuple[float, ...] = (0.25, 0.5, 0.75, 1.0)
"""Thresholds k of the MC@k columns (paper: K = 4 bins)."""

FAILURE_TYPES = ("regret-dominant", "stagnation-dominant", "efficiency-dominant")
"""Failure types of :func:`failure_fingerprints`, in tie-break order."""

_NOT_FINITE = (
    "`{name}[{index}]` = {value!r} is not finite; progress potentials must be finite numbers "
    "in [0, 1]: check the judge for a division by zero or a failed state query."
)
_OUT_OF_RANGE = (
    "`{name}[{index}]` = {value!r} is outside [0, 1]; progress potentials must lie in [0, 1]: "
    "fix the judge's normalisation or clip its output (np.clip(phi, 0.0, 1.0))."
)
_NOT_STARTED = "StreamingOPD.{method}() called before reset(phi0); call reset(phi0) first."


def _check_value(value: float, index: int, name: str = "phi") -> float:
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(_NOT_FINITE.format(name=name, index=index, value=value))
    if not 0.0 <= value <= 1.0:
        raise ValueError(_OUT_OF_RANGE.format(name=name, index=index, value=value))
    return value


def _as_phi(phi: Sequence[float] | np.ndarray, name: str = "phi") -> np.ndarray:
    """Validate a potential sequence and return it as a 1-D float64 array."""
    arr = np.asarray(phi, dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError(f"`{name}` must be 1-D (one Φ per frame), got shape {arr.shape}.")
    if arr.size == 0:
        raise ValueError(f"`{name}` is empty; an episode needs at least Φ_0 (one value/frame).")
    bad = np.flatnonzero(~np.isfinite(arr) | (arr < 0.0) | (arr > 1.0))
    if bad.size:
        _check_value(arr[bad[0]], int(bad[0]), name)
    return arr


def _check_epsilon(epsilon: float) -> float:
    epsilon = float(epsilon)
    if not (math.isfinite(epsilon) and epsilon >= 0.0):
        raise ValueError(
            f"`epsilon` must be a finite number >= 0, got {epsilon!r}; "
            "calibrate it with calibrate_epsilon(phi_static)."
        )
    return epsilon


def _check_k(k: int) -> int:
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
        raise ValueError(f"`k` (number of milestone bins) must be an int >= 1, got {k!r}.")
    return int(k)


def milestone_coverage(mp: float, k: int = 4) -> float:
    """Milestone Coverage MC = max{q ∈ {0, 1/K, ..., 1} : MP ≥ q}.

    From "PRM-as-a-Judge: A Dense Evaluation Paradigm for Fine-Grained Robotic Auditing".
    ``mp`` is compared with the float edges ``j / k``, so ``milestone_coverage(j / k, k)``
    is exactly ``j / k`` and no value below an edge is rounded up.

    Args:
        mp: Max Progress in [0, 1].
        k: Number of bins K (paper: 4).

    Returns:
        The largest edge ``j / k`` that is <= ``mp``.
    """
    k, mp = _check_k(k), _check_value(mp, 0, "mp")
    j = min(max(math.floor(k * mp), 0), k)
    while j < k and (j + 1) / k <= mp:
        j += 1
    while j > 0 and j / k > mp:
        j -= 1
    return j / k


def progress(phi_i: float, phi_j: float) -> float:
    """Progress S(x_i, x_j) = Φ(x_j) − Φ(x_i); additive, so it telescopes at any stride."""
    return float(phi_j) - float(phi_i)


@dataclass(frozen=True)
class OPDMetrics:
    """The five OPD metrics of one episode, plus what is needed to interpret them.

    Attributes:
        mc: Milestone Coverage in {0, 1/k, ..., 1} (higher is better).
        mp: Max Progress max_t Φ_t (higher is better).
        ppl: Path-weighted Progress Length (higher is better).
        cra: Cumulative Regret Area (lower is better).
        str_: Stagnation Ratio (lower is better); also available as ``stagnation``.
        T: Number of transitions (frames − 1).
        phi_0: First potential Φ_0.
        phi_T: Last potential Φ_T.
        epsilon: Stagnation threshold ε used for STR.
        k: Number of milestone bins used for MC.
    """

    mc: float
    mp: float
    ppl: float
    cra: float
    str_: float
    T: int
    phi_0: float
    phi_T: float
    epsilon: float
    k: int

    @property
    def stagnation(self) -> float:
        """Alias of ``str_``."""
        return self.str_

    def as_dict(self) -> dict[str, float]:
        """Return ``{"MC", "MP", "PPL", "CRA", "STR"}`` as fractions (not %)."""
        return {"MC": self.mc, "MP": self.mp, "PPL": self.ppl, "CRA": self.cra, "STR": self.str_}


def _assemble(
    mp: float,
    phi_0: float,
    phi_T: float,
    tv: float,
    regret: float,
    stagnant: int,
    T: int,
    epsilon: float,
    k: int,
) -> OPDMetrics:
    ppl = phi_T * max(phi_T - phi_0, 0.0) / (tv + DELTA)
    str_ = stagnant / T if T else 0.0
    return OPDMetrics(
        milestone_coverage(mp, k), mp, ppl, regret / (T + 1), str_, T, phi_0, phi_T, epsilon, k
    )


def opd_metrics(phi: Sequence[float] | np.ndarray, epsilon: float, k: int = 4) -> OPDMetrics:
    """Compute MC, MP, PPL, CRA and STR of one episode's potentials Φ_0..Φ_T.

    Formulas from "PRM-as-a-Judge: A Dense Evaluation Paradigm for Fine-Grained Robotic
    Auditing" (see the module docstring). Sums are exact-rounded (``math.fsum``).

    Args:
        phi: Potentials, one per scored frame, finite and in [0, 1].
        epsilon: Stagnation threshold ε >= 0 (see :func:`calibrate_epsilon`).
        k: Number of milestone bins K for MC (paper: 4).

    Returns:
        The episode's :class:`OPDMetrics`.

    Raises:
        ValueError: If ``phi`` is empty, not 1-D, or has a value that is not finite or not in
            [0, 1] (the message names the index and value), or ``epsilon``/``k`` are invalid.
    """
    arr = _as_phi(phi)
    epsilon, k = _check_epsilon(epsilon), _check_k(k)
    abs_d = np.abs(np.diff(arr))
    regret = math.fsum((np.maximum.accumulate(arr) - arr).tolist())
    stagnant = int(np.count_nonzero(abs_d < epsilon))
    return _assemble(
        float(arr.max()),
        float(arr[0]),
        float(arr[-1]),
        math.fsum(abs_d.tolist()),
        regret,
        stagnant,
        int(abs_d.size),
        epsilon,
        k,
    )


def _neumaier(total: float, comp: float, x: float) -> tuple[float, float]:
    """One step of Neumaier compensated summation: O(1), error independent of length."""
    t = total + x
    comp += (total - t) + x if abs(total) >= abs(x) else (x - t) + total
    return t, comp


class StreamingOPD:
    """O(1)-per-step accumulator of the OPD metrics, for live judge wrappers.

    Keeps Φ_0, the previous Φ, the running max, TV, the regret sum, the stagnation count and
    the number of transitions n, the streaming form of "PRM-as-a-Judge: A Dense Evaluation
    Paradigm for Fine-Grained Robotic Auditing". Sums are compensated, so ``metrics()``
    agrees with :func:`opd_metrics` on the same sequence to ~1e-15.

    Args:
        epsilon: Stagnation threshold ε >= 0.
        k: Number of milestone bins K for MC (paper: 4).

    Example:
        >>> acc = StreamingOPD(epsilon=0.01)
        >>> acc.reset(0.0)
        >>> for phi in (0.3, 0.2, 0.6):
        ...     acc.update(phi)
        >>> acc.metrics() == opd_metrics([0.0, 0.3, 0.2, 0.6], epsilon=0.01)
        True
    """

    def __init__(self, epsilon: float, k: int = 4) -> None:
        self.epsilon = _check_epsilon(epsilon)
        self.k = _check_k(k)
        self._started = False
        self._start(0.0)

    def _start(self, phi0: float) -> None:
        self._phi_0 = self._prev = self._max = phi0
        self._tv = self._tv_c = self._regret = self._regret_c = 0.0
        self._stagnant = self._n = 0

    @property
    def n(self) -> int:
        """Number of transitions T seen since the last ``reset``."""
        return self._n

    def reset(self, phi0: float) -> None:
        """Start a new episode at Φ_0 = ``phi0`` (finite, in [0, 1])."""
        self._start(_check_value(phi0, 0))
        self._started = True

    def update(self, phi: float) -> None:
        """Add the next potential Φ_t (finite, in [0, 1]).

        Raises:
            RuntimeError: If called before ``reset``.
            ValueError: If ``phi`` is not finite or not in [0, 1] (message gives its index).
        """
        if not self._started:
            raise RuntimeError(_NOT_STARTED.format(method="update"))
        phi = _check_value(phi, self._n + 1)
        abs_d = abs(phi - self._prev)
        self._tv, self._tv_c = _neumaier(self._tv, self._tv_c, abs_d)
        self._stagnant += abs_d < self.epsilon
        self._max = max(self._max, phi)
        self._regret, self._regret_c = _neumaier(self._regret, self._regret_c, self._max - phi)
        self._prev = phi
        self._n += 1

    def metrics(self) -> OPDMetrics:
        """Return the metrics of the episode so far (Φ_0..Φ_n)."""
        if not self._started:
            raise RuntimeError(_NOT_STARTED.format(method="metrics"))
        return _assemble(
            self._max,
            self._phi_0,
            self._prev,
            self._tv + self._tv_c,
            self._regret + self._regret_c,
            int(self._stagnant),
            self._n,
            self.epsilon,
            self.k,
        )


def streamed_opd_metrics(
    phi: Sequence[float] | np.ndarray, epsilon: float, k: int = 4
) -> OPDMetrics:
    """The metrics :class:`StreamingOPD` gives after ``reset(phi[0])`` and ``update`` of the rest.

    Bit for bit the streaming accumulator's result (same compensated sums in the same
    order), in one tight pass: what a recorder computes at the episode's end instead of
    updating an accumulator on every step. Agrees with :func:`opd_metrics` to ~1e-15.

    Example:
        >>> acc = StreamingOPD(epsilon=0.01)
        >>> acc.reset(0.0)
        >>> for phi in (0.3, 0.2, 0.6):
        ...     acc.update(phi)
        >>> streamed_opd_metrics([0.0, 0.3, 0.2, 0.6], epsilon=0.01) == acc.metrics()
        True

    Raises:
        ValueError: As :func:`opd_metrics` (empty, not finite, outside [0, 1], bad ε or k).
    """
    values = _as_phi(phi).tolist()
    epsilon, k = _check_epsilon(epsilon), _check_k(k)  # after Φ's check, as opd_metrics
    return _assemble_sums(_sums(values, epsilon), len(values) - 1, epsilon, k)


def _sums(values: list[float], epsilon: float) -> tuple[float, float, float, float, float,
                                                         float, float, int]:
    """:class:`StreamingOPD`'s sums over checked Φ, its operations in its order (same bits)."""
    prev = top = phi_0 = values[0]
    tv = tv_c = regret = regret_c = 0.0
    stagnant = 0
    for i in range(1, len(values)):
        phi = values[i]
        abs_d = abs(phi - prev)
        t = tv + abs_d
        tv_c += (tv - t) + abs_d if abs(tv) >= abs(abs_d) else (abs_d - t) + tv
        tv = t
        stagnant += abs_d < epsilon
        top = max(top, phi)
        x = top - phi
        t = regret + x
        regret_c += (regret - t) + x if abs(regret) >= abs(x) else (x - t) + regret
        regret = t
        prev = phi
    return top, phi_0, prev, tv, tv_c, regret, regret_c, stagnant


def _assemble_sums(sums: tuple[float, float, float, float, float, float, float, int], n: int,
                   epsilon: float, k: int) -> OPDMetrics:
    top, phi_0, last, tv, tv_c, regret, regret_c, stagnant = sums
    return _assemble(top, phi_0, last, tv + tv_c, regret + regret_c, stagnant, n, epsilon, k)


def opd_scorer(
    epsilon: float, k: int = 4
) -> Callable[[Sequence[float]], dict[str, float]]:
    """A function scoring one episode: ``streamed_opd_metrics(phi, epsilon, k).as_dict()``.

    ε and k are checked here, once; the function then takes a list of Φ. A list of floats in
    [0, 1] (what a recorder holds) is scored directly; anything else takes the checked path,
    which raises the usual error.

    Example:
        >>> score = opd_scorer(epsilon=0.01)
        >>> score([0.0, 0.3, 0.2, 0.6]) == streamed_opd_metrics([0.0, 0.3, 0.2, 0.6], 0.01).as_dict()
        True

    Raises:
        ValueError: A bad ε or k (here), or bad Φ (when the function is called).
    """
    epsilon, k = _check_epsilon(epsilon), _check_k(k)

    def score(phi: Sequence[float]) -> dict[str, float]:
        if phi and all(type(v) is float and 0.0 <= v <= 1.0 for v in phi):
            values = phi if type(phi) is list else list(phi)
            return _assemble_sums(_sums(values, epsilon), len(values) - 1, epsilon, k).as_dict()
        return streamed_opd_metrics(phi, epsilon, k).as_dict()

    return score


def calibrate_epsilon(phi_static: Sequence[float] | np.ndarray, alpha: float = 0.01) -> float:
    """Calibrate the stagnation threshold ε from a static rollout.

    From "PRM-as-a-Judge: A Dense Evaluation Paradigm for Fine-Grained Robotic Auditing":
    roll out a static scene (zero action) for n frames, σ̂ = std(Φ̂), then
    ε = √2 · σ̂ · z_{1−α/2}: the difference of two noisy readings has std √2·σ, so a step
    with |d_t| < ε is judge noise at level α. σ̂ is the sample std (ddof = 1) and z comes
    from ``statistics.NormalDist().inv_cdf``.

    Args:
        phi_static: Judge potentials on a static scene, at least 2 values in [0, 1].
        alpha: Two-sided level in (0, 1) (paper: 0.01, z ≈ 2.5758).

    Returns:
        ε >= 0 (0 for a noiseless judge).

    Raises:
        ValueError: If fewer than 2 values, an invalid value, or alpha not in (0, 1).
    """
    arr = _as_phi(phi_static, "phi_static")
    if arr.size < 2:
        raise ValueError(
            f"`phi_static` needs at least 2 frames to estimate the judge noise, got {arr.size}; "
            "roll out the static scene for more frames (e.g. 100)."
        )
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"`alpha` must be in (0, 1), got {alpha!r} (paper: 0.01).")
    sigma = float(np.std(arr - arr[0], ddof=1))  # shifted: a constant gives exactly 0
    return math.sqrt(2.0) * sigma * NormalDist().inv_cdf(1.0 - alpha / 2.0)


# ---------------------------------------------------------------------------- aggregation


def _check_episodes(metrics: Sequence[OPDMetrics]) -> None:
    if len(metrics) == 0:
        raise ValueError("`metrics` is empty; pass the OPDMetrics of at least one episode.")
    settings = {(m.epsilon, m.k) for m in metrics}
    if len(settings) > 1:
        raise ValueError(
            f"`metrics` mixes (epsilon, k) settings {sorted(settings)}; STR and MC are only "
            "comparable under one setting: re-score all episodes with the same epsilon and k."
        )


def mc_at_k(
    metrics: Sequence[OPDMetrics], thresholds: Sequence[float] = MC_THRESHOLDS
) -> dict[float, float]:
    """MC@k: percentage of episodes with MC ≥ k, for each threshold k.

    From "PRM-as-a-Judge: A Dense Evaluation Paradigm for Fine-Grained Robotic Auditing".

    Raises:
        ValueError: If ``metrics`` is empty or mixes (epsilon, k) settings.
    """
    _check_episodes(metrics)
    return {float(q): 100.0 * sum(m.mc >= q for m in metrics) / len(metrics) for q in thresholds}


def summarize_episodes(
    metrics: Sequence[OPDMetrics], thresholds: Sequence[float] = MC_THRESHOLDS
) -> dict[str, float]:
    """Average per-episode metrics over episodes, ×100, as the paper's tables report them.

    For the "quality of success" view, pass only the successful episodes.

    Returns:
        ``{"n": episodes, "MC", "MP", "PPL", "CRA", "STR": mean × 100,
        "MC@25", "MC@50", "MC@75", "MC@100": % of episodes with MC ≥ k}``.

    Raises:
        ValueError: If ``metrics`` is empty or mixes (epsilon, k) settings.
    """
    _check_episodes(metrics)
    out: dict[str, float] = {"n": len(metrics)}
    for key in ("MC", "MP", "PPL", "CRA", "STR"):
        out[key] = 100.0 * math.fsum(m.as_dict()[key] for m in metrics) / len(metrics)
    for q, pct in mc_at_k(metrics, thresholds).items():
        out[f"MC@{round(100 * q):d}"] = pct
    return out


def format_markdown_table(
    rows: Mapping[str, Mapping[str, float]],
    columns: Sequence[str] | None = None,
    digits: int = 1,
    row_header: str = "policy",
) -> str:
    """Format ``{row name: summary}`` (e.g. of :func:`summarize_episodes`) as markdown.

    Args:
        rows: One mapping of column name to value per row.
        columns: Columns to show, in order; default: the keys of the first row.
        digits: Decimals for floats (ints print as ints; NaN and missing keys as ``-``).
        row_header: Header of the first column.

    Returns:
        A markdown table without a trailing newline.
    """
    if not rows:
        raise ValueError("`rows` is empty; pass at least one {name: summary} entry.")
    cols = list(columns) if columns is not None else list(next(iter(rows.values())))

    def cell(v: float | None) -> str:
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return "-"
        return str(v) if isinstance(v, int | np.integer) else f"{v:.{digits}f}"

    lines = ["| " + " | ".join([row_header, *cols]) + " |", "|---" + "|---:" * len(cols) + "|"]
    for name, row in rows.items():
        lines.append("| " + " | ".join([name, *(cell(row.get(c)) for c in cols)]) + " |")
    return "\n".join(lines)


# --------------------------------------------------------------------- audit fingerprints

_FP_KEYS = ("MP", "PPL", "-CRA", "-STR")


@dataclass(frozen=True)
class FailureFingerprint:
    """One policy's failure fingerprint on one task (see :func:`failure_fingerprints`).

    Attributes:
        n_episodes: Episodes given for the policy.
        n_failed: Failed episodes among them (the only ones used).
        means: Means over failed episodes of ``MP``, ``PPL``, ``-CRA``, ``-STR`` (fractions).
        z: The same four means z-scored across the policies that have failures.
        scores: ``{failure type: score}``.
        failure_type: One of :data:`FAILURE_TYPES`, ``"balanced"`` or ``"no failures"``.
    """

    n_episodes: int
    n_failed: int
    means: Mapping[str, float]
    z: Mapping[str, float]
    scores: Mapping[str, float]
    failure_type: str


def _zscores(values: Mapping[str, float]) -> dict[str, float]:
    arr = np.array(list(values.values()), dtype=np.float64)
    mu, sd = (float(arr.mean()), float(arr.std())) if arr.size else (0.0, 0.0)
    return {p: (v - mu) / sd if sd > 1e-12 else 0.0 for p, v in values.items()}


def failure_fingerprints(
    per_policy: Mapping[str, Sequence[tuple[OPDMetrics, bool]]],
) -> dict[str, FailureFingerprint]:
    """Audit fingerprints of failed episodes, compared across policies on one task.

    From "PRM-as-a-Judge: A Dense Evaluation Paradigm for Fine-Grained Robotic Auditing":
    per policy, the means of MP, PPL, −CRA and −STR over **failed** episodes, z-scored
    across policies (population std; a constant feature, std <= 1e-12, gets z = 0). The
    label is relative to the other policies: the largest of three scores
    (z_CRA = −z_{−CRA}, z_STR = −z_{−STR}):

    * regret-dominant (high MP, high CRA): (z_MP + z_CRA) / 2
    * stagnation-dominant (high STR, modest MP): (z_STR − z_MP) / 2
    * efficiency-dominant (low PPL, high MP): (z_MP − z_PPL) / 2

    The types overlap (a regression also lowers Φ_T, hence PPL), so the label is a coarse
    hint: read the z values. ``"balanced"`` if no score is > 0 (always so for a single
    policy). A policy without
    failed episodes gets NaN means, z and scores, type ``"no failures"``, and is left out
    of the z-scoring.

    Args:
        per_policy: ``{policy: [(episode metrics, task success), ...]}`` for one task.

    Returns:
        ``{policy: FailureFingerprint}`` in the input order.

    Raises:
        ValueError: If ``per_policy`` is empty or a policy has no episodes.
    """
    if not per_policy:
        raise ValueError("`per_policy` is empty; pass {policy: [(OPDMetrics, success), ...]}.")
    means: dict[str, dict[str, float]] = {}
    for policy, episodes in per_policy.items():
        if len(episodes) == 0:
            raise ValueError(f"policy {policy!r} has no episodes; drop it or run its rollouts.")
        failed = [m for m, success in episodes if not success]
        if failed:
            cols = zip(*((m.mp, m.ppl, -m.cra, -m.str_) for m in failed), strict=True)
            means[policy] = {
                key: math.fsum(c) / len(failed) for key, c in zip(_FP_KEYS, cols, strict=True)
            }
    z_by_key = {key: _zscores({p: v[key] for p, v in means.items()}) for key in _FP_KEYS}
    nan_means = dict.fromkeys(_FP_KEYS, math.nan)
    out: dict[str, FailureFingerprint] = {}
    for policy, episodes in per_policy.items():
        if policy not in means:
            nan_scores = dict.fromkeys(FAILURE_TYPES, math.nan)
            out[policy] = FailureFingerprint(
                len(episodes), 0, nan_means, nan_means, nan_scores, "no failures"
            )
            continue
        z = {key: z_by_key[key][policy] for key in _FP_KEYS}
        scores = {
            "regret-dominant": (z["MP"] - z["-CRA"]) / 2.0,
            "stagnation-dominant": (-z["-STR"] - z["MP"]) / 2.0,
            "efficiency-dominant": (z["MP"] - z["PPL"]) / 2.0,
        }
        best = max(FAILURE_TYPES, key=scores.__getitem__)
        n_failed = sum(not success for _, success in episodes)
        out[policy] = FailureFingerprint(
            len(episodes),
            n_failed,
            means[policy],
            z,
            scores,
            best if scores[best] > 0.0 else "balanced",
        )
    return out
