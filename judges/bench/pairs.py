"""RoboPulse-style pulse pairs: (before, after) states labelled by the privileged Φ.

Construction (``docs/methods.md`` (opd)), on every episode's privileged Φ_0..Φ_T:

* **Monotone phases**: maximal runs where Φ never falls (rises) by more than ``tol`` per
  step. Pairs p < q are taken inside one phase, so nothing in between contradicts the
  label.
* **Forward** pairs (label +1): p < q in a rising phase, before = x_p, after = x_q,
  hop H = (Φ_q − Φ_p) / (Φ_M − Φ_p) with Φ_M the episode's maximum.
* **Reversed** pairs (label −1): a forward pair presented backwards, before = x_q, after =
  x_p, H = (Φ_p − Φ_q) / (Φ_q − Φ_0).
* **Genuine regressions** (label −1): p < q in a falling phase (Φ truly fell in the
  rollout: a drawer pushed back, a lid dropped after release), before = x_p, after = x_q,
  H = (Φ_q − Φ_p) / (Φ_p − Φ_0).
* **Neutral** pairs (label 0, optional): p < q in a flat run, max − min of Φ over
  [p, q] < ``neutral_eps``.

|H| is clipped to [0, 1] and binned: small [0, 1/3], medium (1/3, 2/3], large (2/3, 1].
Denominators are floored at ``hop_floor`` (0.1): without it a change of 0.02 after 0.02
of progress (a robot that has barely moved) would be a "large" hop, and the large bin would
fill with the smallest absolute changes of the data set. Labelled pairs
need |ΔΦ| ≥ ``min_delta`` so that ties in the ground truth cannot occur. Within each bin
labels are balanced (half +1, half −1; genuine regressions first, up to
``genuine_share`` of the negatives, reversed pairs fill the rest) and the frame gap
Δt = |q − p| is spread over :data:`GAP_STRATA` round-robin, so the time gap is no
shortcut to the hop size. Within a stratum an episode is drawn uniformly, then a pair of
it, so long episodes do not dominate. Everything is seeded.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

__all__ = [
    "GAP_STRATA",
    "HOP_BINS",
    "PAIR_KINDS",
    "PulsePair",
    "build_pulse_pairs",
    "gap_stratum",
    "hop_bin",
    "monotone_phases",
    "pair_stats",
]

HOP_BINS: tuple[tuple[str, float, float], ...] = (
    ("small", 0.0, 1.0 / 3.0),
    ("medium", 1.0 / 3.0, 2.0 / 3.0),
    ("large", 2.0 / 3.0, 1.0),
)
"""(name, low, high) of the hop bins on |H|: small [0, 1/3], medium (1/3, 2/3], large (2/3, 1]."""

GAP_STRATA: tuple[tuple[str, int, int], ...] = (
    ("1-2", 1, 2),
    ("3-6", 3, 6),
    ("7-15", 7, 15),
    ("16+", 16, 10**9),
)
"""(name, low, high) of the frame-gap strata Δt (steps, inclusive)."""

PAIR_KINDS: tuple[str, ...] = ("forward", "reversed", "regression", "neutral")


@dataclass(frozen=True)
class PulsePair:
    """One labelled pair of states of an episode.

    Attributes:
        episode: Index of the episode in the list the pairs were built from.
        before: Step index of the first state shown.
        after: Step index of the second state shown.
        label: +1 progress, −1 regression, 0 neutral.
        hop: Signed hop score H (0 for neutral pairs).
        bin: ``small``/``medium``/``large``, or ``neutral``.
        kind: ``forward``, ``reversed``, ``regression`` or ``neutral``.
        phi_before: Privileged Φ of ``before``.
        phi_after: Privileged Φ of ``after``.
        gap: Frame gap |after − before| (steps).
    """

    episode: int
    before: int
    after: int
    label: int
    hop: float
    bin: str
    kind: str
    phi_before: float
    phi_after: float
    gap: int

    @property
    def stratum(self) -> str:
        """The frame-gap stratum of :data:`GAP_STRATA`."""
        return gap_stratum(self.gap)

    @property
    def genuine(self) -> bool:
        """A regression that really happened in the rollout (not a reversed pair)."""
        return self.kind == "regression"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return asdict(self)


def hop_bin(hop: float) -> str:
    """The bin of |H| (values are clipped to [0, 1] first)."""
    value = min(max(abs(float(hop)), 0.0), 1.0)
    for name, _, high in HOP_BINS:
        if value <= high:
            return name
    return HOP_BINS[-1][0]  # pragma: no cover - value <= 1 always matches


def gap_stratum(gap: int) -> str:
    """The stratum of a frame gap (steps ≥ 1)."""
    for name, low, high in GAP_STRATA:
        if low <= gap <= high:
            return name
    return GAP_STRATA[0][0] if gap < 1 else GAP_STRATA[-1][0]


def monotone_phases(
    phi: Sequence[float] | np.ndarray, rising: bool, tol: float = 1e-3
) -> list[tuple[int, int]]:
    """Maximal [a, b] (inclusive, b > a) where Φ never moves against ``rising`` by > tol."""
    d = np.diff(np.asarray(phi, dtype=float))
    ok = d >= -tol if rising else d <= tol
    phases, start = [], None
    for t, good in enumerate(ok):
        if good and start is None:
            start = t
        elif not good and start is not None:
            phases.append((start, t))
            start = None
    if start is not None:
        phases.append((start, len(d)))
    return phases


Pool = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
"""Candidates of one (bin, kind): episode, before, after and signed hop arrays."""


def _hops(num: np.ndarray, den: np.ndarray, floor: float) -> np.ndarray:
    """|H| = num / max(den, floor) clipped to [0, 1] (a zero floor and den ≤ 0 give 1)."""
    den = np.maximum(den, floor)
    with np.errstate(divide="ignore", invalid="ignore"):
        h = np.where(den > 1e-12, num / np.where(den > 1e-12, den, 1.0), 1.0)
    return np.clip(h, 0.0, 1.0)


def _bin_index(h: np.ndarray) -> np.ndarray:
    edges = np.array([high for _, _, high in HOP_BINS[:-1]])
    return np.searchsorted(edges, h, side="left")


def _candidates(
    e: int, phi: np.ndarray, min_delta: float, tol: float, floor: float
) -> Iterator[tuple[str, str, np.ndarray, np.ndarray, np.ndarray]]:
    """(bin, kind, before, after, signed hop) arrays of one episode's labelled candidates."""
    phi0, phim = float(phi[0]), float(phi.max())
    names = [name for name, _, _ in HOP_BINS]
    for rising in (True, False):
        for a, b in monotone_phases(phi, rising, tol):
            p, q = np.triu_indices(b - a + 1, k=1)
            p, q = p + a, q + a
            delta = phi[q] - phi[p]
            keep = delta >= min_delta if rising else delta <= -min_delta
            p, q = p[keep], q[keep]
            fp, fq = phi[p], phi[q]
            if rising:
                sets = [("forward", p, q, _hops(fq - fp, phim - fp, floor)),
                        ("reversed", q, p, -_hops(fq - fp, fq - phi0, floor))]
            else:
                sets = [("regression", p, q, -_hops(fp - fq, fp - phi0, floor))]
            for kind, before, after, hop in sets:
                index = _bin_index(np.abs(hop))
                for k, name in enumerate(names):
                    sel = index == k
                    if sel.any():
                        yield name, kind, before[sel], after[sel], hop[sel]


def _neutral_candidates(e: int, phi: np.ndarray, eps: float) -> Iterator[tuple[int, int]]:
    n = len(phi)
    for i in range(n - 1):
        lo = hi = float(phi[i])
        for j in range(i + 1, n):
            lo, hi = min(lo, float(phi[j])), max(hi, float(phi[j]))
            if hi - lo >= eps:
                break
            yield i, j


class _Pool:
    """Candidates of one (bin, kind), drawn strata round-robin, episode, then pair."""

    def __init__(self, rows: list[tuple[int, np.ndarray, np.ndarray, np.ndarray]],
                 rng: np.random.Generator) -> None:
        self.groups: dict[str, dict[int, list[tuple[int, int, float]]]] = {}
        for e, before, after, hop in rows:
            gaps = np.abs(after - before)
            for b, a, h, g in zip(before.tolist(), after.tolist(), hop.tolist(), gaps.tolist(),
                                  strict=True):
                stratum = gap_stratum(int(g))
                self.groups.setdefault(stratum, {}).setdefault(e, []).append((b, a, h))
        for episodes in self.groups.values():
            for e, items in episodes.items():
                order = rng.permutation(len(items))
                episodes[e] = [items[i] for i in order]

    def draw(self, n: int, rng: np.random.Generator, taken: set[tuple[int, int, int]],
             make: Any) -> list[PulsePair]:
        out: list[PulsePair] = []
        while len(out) < n:
            progressed = False
            for stratum, _, _ in GAP_STRATA:
                episodes = self.groups.get(stratum)
                while len(out) < n and episodes:
                    keys = sorted(episodes)
                    e = keys[int(rng.integers(len(keys)))]
                    b, a, h = episodes[e].pop()
                    if not episodes[e]:
                        del episodes[e]
                    key = (e, min(a, b), max(a, b))
                    if key in taken:
                        continue
                    taken.add(key)
                    out.append(make(e, b, a, h))
                    progressed = True
                    break
            if not progressed:
                break
        return out


def build_pulse_pairs(
    phis: Sequence[Sequence[float]],
    n_pairs: int = 300,
    seed: int = 0,
    *,
    min_delta: float = 0.01,
    n_neutral: int = 0,
    neutral_eps: float = 0.002,
    genuine_share: float = 0.5,
    tol: float = 1e-3,
    hop_floor: float = 0.1,
) -> list[PulsePair]:
    """Balanced, binned, gap-stratified pulse pairs (see the module docstring).

    Args:
        phis: Privileged Φ per step of each episode (reset state first).
        n_pairs: Labelled pairs wanted, split evenly over the three bins (each bin half
            +1, half −1). A bin short of candidates gets fewer (still balanced);
            :func:`pair_stats` reports the counts.
        seed: Seed of every random choice.
        min_delta: Smallest |ΔΦ| of a labelled pair.
        n_neutral: Neutral pairs wanted (0 = none).
        neutral_eps: Neutral pairs have max − min of Φ over the span below this.
        genuine_share: Largest share of a bin's negatives taken from genuine regressions.
        tol: Per-step slack of a monotone phase.
        hop_floor: Smallest denominator of the hop score H.

    Returns:
        Labelled pairs bin by bin (small, medium, large), then neutral ones.
    """
    if n_pairs < 0 or n_neutral < 0 or not 0.0 <= genuine_share <= 1.0:
        raise ValueError(f"need n_pairs >= 0, n_neutral >= 0 and 0 <= genuine_share <= 1; got "
                         f"{n_pairs}, {n_neutral}, {genuine_share}")
    rng = np.random.default_rng(seed)
    arrays = [np.asarray(phi, dtype=float) for phi in phis]
    rows: dict[tuple[str, str], list] = defaultdict(list)
    for e, phi in enumerate(arrays):
        for name, kind, before, after, hop in _candidates(e, phi, min_delta, tol, hop_floor):
            rows[(name, kind)].append((e, before, after, hop))

    def make(kind: str, label: int) -> Any:
        def build(e: int, b: int, a: int, h: float) -> PulsePair:
            fb, fa = float(arrays[e][b]), float(arrays[e][a])
            name = "neutral" if kind == "neutral" else hop_bin(h)
            return PulsePair(e, b, a, label, float(h), name, kind, fb, fa, abs(a - b))
        return build

    taken: set[tuple[int, int, int]] = set()
    out: list[PulsePair] = []
    for index, (name, _, _) in enumerate(HOP_BINS):
        want = n_pairs // 3 + (1 if index < n_pairs % 3 else 0)
        pools = {kind: _Pool(rows[(name, kind)], rng)
                 for kind in ("forward", "reversed", "regression")}
        n_forward = sum(len(r[1]) for r in rows[(name, "forward")])
        n_negative = sum(len(r[1]) for k in ("reversed", "regression") for r in rows[(name, k)])
        half = min(want // 2, n_forward, n_negative)
        genuine = pools["regression"].draw(int(np.ceil(half * genuine_share)), rng, taken,
                                           make("regression", -1))
        flipped = pools["reversed"].draw(half - len(genuine), rng, taken, make("reversed", -1))
        if len(genuine) + len(flipped) < half:  # too few reversed pairs: more genuine ones
            genuine += pools["regression"].draw(half - len(genuine) - len(flipped), rng, taken,
                                                make("regression", -1))
        negative = genuine + flipped
        positive = pools["forward"].draw(len(negative), rng, taken, make("forward", 1))
        out += positive + negative[: len(positive)]
    if n_neutral:
        neutral = [(e, np.array([i for i, _ in found]), np.array([j for _, j in found]),
                    np.zeros(len(found)))
                   for e, phi in enumerate(arrays)
                   if (found := list(_neutral_candidates(e, phi, neutral_eps)))]
        out += _Pool(neutral, rng).draw(n_neutral, rng, taken, make("neutral", 0))
    return out


def pair_stats(pairs: Sequence[PulsePair]) -> dict[str, Any]:
    """Counts per bin, label and kind; genuine-regression share; frame gaps per bin."""
    labelled = [p for p in pairs if p.label != 0]
    negatives = [p for p in labelled if p.label < 0]
    bins: dict[str, Any] = {}
    for name, _, _ in HOP_BINS:
        in_bin = [p for p in labelled if p.bin == name]
        gaps = [p.gap for p in in_bin]
        bins[name] = {
            "n": len(in_bin),
            "positive": sum(p.label > 0 for p in in_bin),
            "negative": sum(p.label < 0 for p in in_bin),
            "genuine": sum(p.genuine for p in in_bin),
            "gap_mean": float(np.mean(gaps)) if gaps else None,
            "gap_strata": dict(Counter(p.stratum for p in in_bin)),
            "abs_delta_mean": float(np.mean([abs(p.phi_after - p.phi_before) for p in in_bin]))
            if in_bin else None,
        }
    return {
        "n": len(labelled),
        "neutral": len(pairs) - len(labelled),
        "kinds": dict(Counter(p.kind for p in pairs)),
        "genuine_share": (sum(p.genuine for p in negatives) / len(negatives)) if negatives
        else 0.0,
        "episodes": len({p.episode for p in pairs}),
        "bins": bins,
    }
