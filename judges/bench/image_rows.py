"""Pulse-pair rows of judges that read frames: occlusion, viewpoints and invariance checks.

- **occlusion**: a grey patch of ``frac`` of the image side at a random place per pair,
  the same on every frame of the pair (a static occluder; spatial patch masking);
- **viewpoint**: every frame from the env's default camera orbited about its target by
  (Δazimuth, Δelevation) degrees; ``az+8°`` lies inside the training cone of
  ``image-progress`` (±12°, ±6°), ``az−20°`` outside it (a held-out viewpoint);
- **invariance**: for each labelled pair's later state, Φ̂ of the same frame observed twice
  in a row (``duplicate frame``) and of the frame with a mild colour jitter (gain 0.95–1.05
  per channel); a check passes when the two scores differ by at most 1 on the 0–10 scale
  (|ΔΦ̂| ≤ 0.1). ``overall`` is the share that passes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..base import Judge
from ..context import JudgeContext
from .episodes import BenchEpisode
from .pairs import PulsePair
from .scoring import EnvSource, FrameSource, _env, judge_states, score_pairs, summarize_pairs

__all__ = ["IMAGE_VARIANTS", "image_variant_rows", "invariance_rows", "occlusion",
           "viewpoint"]


def occlusion(frac: float = 0.2) -> Any:
    """Variant: a grey patch of ``frac`` × the image side, the same on all frames of a pair."""
    def make(rng: np.random.Generator) -> FrameSource:
        u, v, grey = float(rng.random()), float(rng.random()), int(rng.integers(60, 200))

        def frame(_: int, env: Any) -> np.ndarray:
            img = np.array(env.render(), copy=True)
            h, w = img.shape[:2]
            ph, pw = max(1, int(frac * h)), max(1, int(frac * w))
            y, x = int(v * (h - ph)), int(u * (w - pw))
            img[y:y + ph, x:x + pw] = grey
            return img
        return frame
    return make


def viewpoint(d_azimuth: float, d_elevation: float = 0.0) -> Any:
    """Variant: frames from the default camera orbited by the given degrees."""
    from simjudge.envs.backends.base import CameraSpec
    from simjudge.judges.learned.image_data import shift_camera

    def make(_: np.random.Generator) -> FrameSource:
        def frame(__: int, env: Any) -> np.ndarray:
            cfg = env.scene_config.cameras[0]
            base = CameraSpec(cfg.name, cfg.eye, cfg.target, fov=cfg.fov, width=cfg.width,
                              height=cfg.height)
            return env.backend.render(shift_camera(base, d_azimuth, d_elevation)).rgb
        return frame
    return make


IMAGE_VARIANTS: dict[str, Any] = {
    "occlusion 20%": occlusion(0.2),
    "viewpoint az+8°": viewpoint(8.0, 3.0),
    "viewpoint az−20°": viewpoint(-20.0),
}
"""Pair rows of frame-reading judges (see the module docstring)."""


def image_variant_rows(judge: Judge, pairs: Sequence[PulsePair],
                       episodes: Sequence[BenchEpisode], envs: EnvSource,
                       contexts: Mapping[str, JudgeContext], seed: int = 0
                       ) -> dict[str, Any]:
    """Pair accuracy under every :data:`IMAGE_VARIANTS` entry, then the invariance rows."""
    rows: dict[str, Any] = {
        name: summarize_pairs(score_pairs(judge, pairs, episodes, envs, contexts, seed=seed,
                                          variant=variant))
        for name, variant in IMAGE_VARIANTS.items()}
    rows.update(invariance_rows(judge, pairs, episodes, envs, contexts, seed=seed))
    return rows


def _jitter(rng: np.random.Generator) -> FrameSource:
    gain = rng.uniform(0.95, 1.05, 3)

    def frame(index: int, env: Any) -> np.ndarray:
        img = env.render()
        if index < 2:  # the reference and the first look stay clean
            return img
        return np.clip(np.rint(img * gain), 0, 255).astype(np.uint8)
    return frame


def invariance_rows(judge: Judge, pairs: Sequence[PulsePair], episodes: Sequence[BenchEpisode],
                    envs: EnvSource, contexts: Mapping[str, JudgeContext], seed: int = 0,
                    tol: float = 0.1) -> dict[str, Any]:
    """``duplicate frame`` and ``colour jitter`` rows (see the module docstring)."""
    out: dict[str, Any] = {}
    for name, source in (("invariance: duplicate frame", None),
                         ("invariance: colour jitter", _jitter)):
        deltas: list[float] = []
        invalid = 0
        for index, pair in enumerate(p for p in pairs if p.label != 0):
            episode = episodes[pair.episode]
            state = episode.state(pair.after)
            context = contexts[episode.task].for_episode(seed * 100_003 + index, index)
            rng = np.random.default_rng([seed, index, 2])
            frames = source(rng) if source is not None else None
            try:
                signals = judge_states(judge, _env(envs, episode.task), context,
                                       [episode.state(0), state, state], frames=frames)
                a, b = signals[1].phi, signals[2].phi
                if a is None or b is None:
                    raise ValueError("no Φ̂")
                deltas.append(abs(float(b) - float(a)))
            except Exception:  # noqa: BLE001 - a judge error counts as a failed check
                invalid += 1
        n = len(deltas) + invalid
        out[name] = {"overall": (sum(d <= tol for d in deltas) / n) if n else None,
                     "mean_abs_delta_0_10": 10 * float(np.mean(deltas)) if deltas else None,
                     "max_abs_delta_0_10": 10 * float(np.max(deltas)) if deltas else None,
                     "n": n, "invalid": invalid, "bins": {}}
    return out
