"""``image-progress``: Φ̂ from rendered RGB frames and the task text (an image PRM).

Reads only ``transition.frame`` (the env's exterior camera; wrappers render it because the
judge sets ``needs_frames``) and the task description of the context. The first frame it
sees after :meth:`reset` is the episode's reference; every frame is box-filtered to
:data:`~.image_data.FRAME_SIZE` and scored with the first one by
:class:`~.image_model.ImageProgressNet` (or the mean Φ̂ of an
:class:`~.image_model.ImageProgressEnsemble` of them, as the weights file says). Trained on
privileged Φ labels (``simjudge judges train --judge image-progress``); the shipped weights
are :data:`DEFAULT_IMAGE_WEIGHTS`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ..base import Judge
from ..context import JudgeContext
from ..signals import UNDECIDED_CODE, FastSignal, JudgeSignal, Transition
from .image_data import to_model_size

__all__ = ["DEFAULT_IMAGE_WEIGHTS", "ImageProgressJudge"]

DEFAULT_IMAGE_WEIGHTS = Path(__file__).parent / "weights" / "image_progress.npz"
"""The shipped weights (with ``image_progress.npz.sha256`` and ``IMAGE_MODEL_CARD.md``)."""

_NETS: dict[str, Any] = {}


def load_cached_net(weights: str) -> Any:
    """The network of ``weights`` (loaded once per process; sha256 checked).

    Raises:
        FileNotFoundError: The weights are missing.
    """
    if weights not in _NETS:
        if not Path(weights).exists():
            raise FileNotFoundError(
                f"image-progress weights {weights} are missing; build them with `simjudge "
                "judges dataset --images` then `simjudge judges train --judge image-progress`")
        from .image_model import load_image_net

        _NETS[weights] = load_image_net(weights)[0]
    return _NETS[weights]


class ImageProgressJudge(Judge):
    """Learned progress potential over rendered frames (see the module docstring).

    Args:
        weights: Path of the weights (default: the shipped ones).
    """

    name = "image-progress"
    provides_potential = True
    needs_frames = True
    reference_first_frame = True
    max_reward = 1.0
    _transient = ("_net", "_embedder")

    def __init__(self, weights: str | None = None) -> None:
        super().__init__()
        self.weights = str(weights) if weights else str(DEFAULT_IMAGE_WEIGHTS)
        self._net: Any = None
        self._embedder: Any = None
        self._task_emb: np.ndarray | None = None
        self._first: np.ndarray | None = None
        self._texts: dict[str, np.ndarray] = {}

    def _load(self) -> Any:
        if self._net is None:
            self._net = load_cached_net(self.weights)
        return self._net

    def _reset(self, context: JudgeContext) -> None:
        self._load()
        text = context.task or context.task_name
        if not text:
            raise ValueError(f"{self.label} needs the task text: JudgeContext(task=...)")
        if text not in self._texts:
            if self._embedder is None:
                from .obs_judge import text_embedder

                self._embedder = text_embedder()
            self._texts[text] = np.asarray(self._embedder.embed([text])[0], np.float32)
        self._task_emb = self._texts[text]
        self._first = None

    def phi_of_frame(self, frame: np.ndarray) -> float:
        """Φ̂ of an RGB frame; the first frame after :meth:`reset` becomes the reference."""
        import torch

        if self._task_emb is None:
            raise ValueError(f"{self.label}: call reset(context) before judging frames")
        net = self._load()
        current = to_model_size(frame, tuple(net.size))
        if self._first is None:
            self._first = current

        def tensor(img: np.ndarray) -> torch.Tensor:
            return torch.from_numpy(np.array(img)).permute(2, 0, 1)[None].float().div_(255.0)

        with torch.no_grad():
            phi = net(tensor(current), tensor(self._first),
                      torch.from_numpy(self._task_emb[None]))
        return float(np.clip(phi.item(), 0.0, 1.0))

    def _phi(self, transition: Transition | None) -> float:
        if transition is None or transition.frame is None:
            raise ValueError(f"{self.label} needs a rendered frame (transition.frame): make "
                             "the env with render_mode='rgb_array'")
        return self.phi_of_frame(transition.frame)

    def _observe(self, transition: Transition) -> JudgeSignal:
        phi = self._phi(transition)
        return JudgeSignal(reward=phi, phi=phi, reason=f"estimated progress {phi:.3f} from "
                           "the frame")

    def _fast(self, step: int, view: Any, info: Mapping[str, Any], done: bool,
              transition: Transition | None) -> FastSignal:
        phi = self._phi(transition)
        return FastSignal(phi, phi, UNDECIDED_CODE, None)

    def _explain(self, fast: FastSignal) -> JudgeSignal:
        phi = float(fast.phi if fast.phi is not None else fast.reward)
        return JudgeSignal(reward=phi, phi=phi, reason=f"estimated progress {phi:.3f} from "
                           "the frame")
