"""Process reward model (PRM) verifier for solution prefixes (VERGSA).

For a task specification and a solution prefix (scene, subtasks 1..k) the PRM
estimates p_k, the probability that the solution succeeds. Training data are
prefixes labelled by execution (``y = success(subtask k) AND success(task)``,
MCTS-style completions, see ``docs/methods.md`` (vergsa)); the loss is binary
cross-entropy with focal weighting for class imbalance. Prefix scores are
aggregated into a solution score by ``mean``, ``geometric`` mean, ``min``,
``max`` or ``last`` (= p_n); best-of-N picks the highest.

Features (the paper fine-tunes a 1.5B LLM; here a small head on frozen
sentence embeddings, which fits two CPU cores): the embedding of the task text,
of the current subtask (name, kind, code), the mean embedding of the prefix, the
task–subtask cosine similarity, and static facts about the current subtask
(kind, relative position, and the rule judge's score / error / warning counts
when a rule scorer is given). The embedder is injected — judges never import
:mod:`simjudge.tasks` — and must map a list of texts to unit vectors.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from simjudge.tasks.spec import write_json

__all__ = [
    "AGGREGATIONS",
    "PRMConfig",
    "PRMExample",
    "PRMVerifier",
    "aggregate",
    "focal_loss",
    "scene_text",
]

AGGREGATIONS: tuple[str, ...] = ("mean", "geometric", "min", "max", "last")

EmbedFn = Callable[[Sequence[str]], np.ndarray]
RuleFn = Callable[[str, str, str], tuple[float, int, int]]
"""``(context, kind, code) -> (score in {0, 0.5, 1}, n_errors, n_warnings)``; ``context``
is :attr:`PRMExample.context` (e.g. the asset whose names the code may use)."""


@dataclass(frozen=True)
class PRMExample:
    """One labelled prefix.

    Attributes:
        task_text: "name: description" of the task (plus object).
        subtasks: The prefix's subtasks as ``(name, kind, code)``; the last is current.
        n_subtasks: Length of the whole solution the prefix comes from.
        label: 1 if the prefix leads to success, else 0 (None when unlabelled).
        group: Identifier of the solution it belongs to (for aggregation).
        context: What the rule scorer needs to know (e.g. the object's asset id).
        scene: The solution's scene as text (:func:`scene_text`): VERGSA verifies the scene
            together with the subtasks, so the scene is a feature too.
    """

    task_text: str
    subtasks: tuple[tuple[str, str, str], ...]
    n_subtasks: int
    label: int | None = None
    group: str = ""
    context: str = ""
    scene: str = ""


@dataclass(frozen=True)
class PRMConfig:
    """Training settings.

    Attributes:
        hidden: Hidden layer widths of the head.
        epochs: Training epochs.
        lr: Peak learning rate (cosine schedule after linear warm-up).
        warmup: Fraction of steps spent warming up.
        weight_decay: AdamW weight decay.
        gamma: Focal-loss focusing parameter (0 = plain BCE).
        alpha: Focal-loss weight of the positive class (None = balance by frequency).
        batch_size: Mini-batch size.
        dropout: Dropout rate.
        seed: Seed of initialisation and shuffling.
    """

    hidden: tuple[int, ...] = (256, 64)
    epochs: int = 150
    lr: float = 1e-3
    warmup: float = 0.1
    weight_decay: float = 1e-3
    gamma: float = 2.0
    alpha: float | None = None
    batch_size: int = 64
    dropout: float = 0.1
    seed: int = 0


def _torch():
    try:
        import torch
    except ImportError as exc:  # pragma: no cover - torch is a dev dependency
        raise ImportError(
            "the PRM verifier needs torch; install it with `pip install torch==2.13.0` "
            "(the CPU wheel) before `pip install simjudge[rl]`"
        ) from exc
    return torch


class _one_thread:
    """Run torch on one thread.

    A small head gains nothing from more, and on a busy 2-core machine intra-op threads
    contend (measured 15x slower).
    """

    def __enter__(self):
        torch = _torch()
        self.previous = torch.get_num_threads()
        torch.set_num_threads(1)

    def __exit__(self, *exc):
        _torch().set_num_threads(self.previous)


def focal_loss(logits, targets, gamma: float = 2.0, alpha: float | None = 0.5):
    """Mean binary focal loss (Lin et al.) on logits; gamma=0, alpha=None gives BCE."""
    torch = _torch()
    bce = torch.nn.functional.binary_cross_entropy_with_logits(logits, targets, reduction="none")
    p = torch.sigmoid(logits)
    p_t = p * targets + (1 - p) * (1 - targets)
    loss = bce * (1 - p_t) ** gamma
    if alpha is not None:
        loss = loss * (alpha * targets + (1 - alpha) * (1 - targets))
    return loss.mean()


def aggregate(scores: Sequence[float], strategy: str) -> float:
    """Solution score from prefix scores p_1..p_n."""
    if strategy not in AGGREGATIONS:
        raise ValueError(f"unknown aggregation {strategy!r}; use one of {list(AGGREGATIONS)}")
    if not scores:
        raise ValueError("no prefix scores to aggregate")
    values = np.asarray(scores, dtype=float)
    if strategy == "mean":
        return float(values.mean())
    if strategy == "geometric":
        return float(np.exp(np.log(np.clip(values, 1e-9, 1.0)).mean()))
    if strategy == "min":
        return float(values.min())
    if strategy == "max":
        return float(values.max())
    return float(values[-1])


def scene_text(scene: Mapping[str, Any]) -> str:
    """A scene config dict as one line per object: asset, placement relation, initial joints.

    Example:
        >>> scene_text({"objects": [{"name": "Box", "asset": "Box-0", "joint_init": {"joint_0": 0.9}}]})
        'scene: Box = Box-0, joints joint_0=0.90'
    """
    parts = []
    for obj in scene.get("objects", []):
        text = f"{obj.get('name')} = {obj.get('asset')}"
        for relation in ("on", "inside"):
            if obj.get(relation):
                text += f", {relation} {obj[relation]}"
        joints = obj.get("joint_init") or {}
        if joints:
            text += ", joints " + " ".join(
                f"{k}={v:.2f}" if isinstance(v, int | float) else f"{k}={v}"
                for k, v in sorted(joints.items())
            )
        if obj.get("distractor"):
            text += ", distractor"
        parts.append(text)
    return "scene: " + "; ".join(parts)


def _subtask_text(name: str, kind: str, code: str) -> str:
    return f"{kind} subtask: {name}\n{code}"


@dataclass
class PRMVerifier:
    """A trained (or trainable) PRM.

    Args:
        embed: Texts -> unit vectors ``(n, d)`` (e.g. MiniLM).
        rule: Optional static scorer of a subtask's code (a rule judge).
        config: Training settings.
    """

    embed: EmbedFn
    rule: RuleFn | None = None
    config: PRMConfig = field(default_factory=PRMConfig)
    threshold: float = 0.5
    _model: Any = None
    _dim: int = 0
    history: list[float] = field(default_factory=list)

    # features ----------------------------------------------------------------------
    def features(self, examples: Sequence[PRMExample]) -> np.ndarray:
        """Feature matrix ``(n, f)`` of labelled or unlabelled prefixes."""
        tasks = self.embed([e.task_text for e in examples])
        scenes = self.embed([e.scene or "scene: unknown" for e in examples])
        texts = sorted({_subtask_text(*s) for e in examples for s in e.subtasks})
        lookup = dict(zip(texts, self.embed(texts), strict=True)) if texts else {}
        rows = []
        for example, task_vec, scene_vec in zip(examples, tasks, scenes, strict=True):
            vecs = np.stack([lookup[_subtask_text(*s)] for s in example.subtasks])
            current = vecs[-1]
            name, kind, code = example.subtasks[-1]
            k = len(example.subtasks)
            static = [
                float(kind == "reward"),
                k / max(example.n_subtasks, 1),
                float(k == example.n_subtasks),
                float(task_vec @ current),
                float(task_vec @ scene_vec),
            ]
            if self.rule is not None:
                score, errors, warnings = self.rule(example.context, kind, code)
                static += [score, math.log1p(errors), math.log1p(warnings)]
            rows.append(
                np.concatenate([task_vec, scene_vec, current, vecs.mean(axis=0), static])
            )
        return np.asarray(rows, dtype=np.float32)

    # training ------------------------------------------------------------------------
    def _build(self, dim: int):
        torch = _torch()
        layers, width = [], dim
        for hidden in self.config.hidden:
            layers += [torch.nn.Linear(width, hidden), torch.nn.ReLU(),
                       torch.nn.Dropout(self.config.dropout)]
            width = hidden
        layers.append(torch.nn.Linear(width, 1))
        self._dim = dim
        return torch.nn.Sequential(*layers)

    def fit(self, examples: Sequence[PRMExample]) -> PRMVerifier:
        """Train on labelled prefixes (focal loss, AdamW, warm-up + cosine schedule)."""
        labelled = [e for e in examples if e.label is not None]
        if not labelled or len({e.label for e in labelled}) < 2:
            raise ValueError(
                "PRM training needs labelled prefixes of both classes; build a dataset with "
                "`simjudge dataset build` (it executes solutions to label them)"
            )
        with _one_thread():
            return self._fit(labelled)

    def _fit(self, labelled: list[PRMExample]) -> PRMVerifier:
        torch = _torch()
        torch.manual_seed(self.config.seed)
        x = torch.tensor(self.features(labelled))
        y = torch.tensor([float(e.label) for e in labelled if e.label is not None])  # all are
        self._model = self._build(x.shape[1])
        alpha = self.config.alpha
        if alpha is None:  # weight the rarer class up
            alpha = float(1.0 - y.mean().item())
        opt = torch.optim.AdamW(self._model.parameters(), lr=self.config.lr,
                                weight_decay=self.config.weight_decay)
        steps_per_epoch = math.ceil(len(labelled) / self.config.batch_size)
        total = steps_per_epoch * self.config.epochs
        warm = max(1, int(self.config.warmup * total))
        sched = torch.optim.lr_scheduler.LambdaLR(
            opt, lambda s: (s + 1) / warm if s < warm
            else 0.5 * (1 + math.cos(math.pi * (s - warm) / max(1, total - warm)))
        )
        gen = torch.Generator().manual_seed(self.config.seed)
        self.history = []
        self._model.train()
        for _ in range(self.config.epochs):
            order = torch.randperm(len(labelled), generator=gen)
            epoch_loss = 0.0
            for start in range(0, len(labelled), self.config.batch_size):
                idx = order[start:start + self.config.batch_size]
                loss = focal_loss(self._model(x[idx]).squeeze(-1), y[idx],
                                  self.config.gamma, alpha)
                opt.zero_grad()
                loss.backward()
                opt.step()
                sched.step()
                epoch_loss += float(loss.detach()) * len(idx)
            self.history.append(epoch_loss / len(labelled))
        self._model.eval()
        return self

    # scoring -------------------------------------------------------------------------
    def predict(self, examples: Sequence[PRMExample]) -> np.ndarray:
        """p_k for each prefix."""
        if self._model is None:
            raise RuntimeError("the PRM is not trained; call fit() or load() first")
        torch = _torch()
        with _one_thread(), torch.no_grad():
            logits = self._model(torch.tensor(self.features(examples))).squeeze(-1)
        return torch.sigmoid(logits).numpy().astype(float)

    def score_solution(
        self,
        task_text: str,
        subtasks: Sequence[tuple[str, str, str]],
        strategy: str = "last",
        context: str = "",
        scene: str = "",
    ) -> tuple[float, list[float]]:
        """Aggregated score and per-prefix scores of one whole solution."""
        n = len(subtasks)
        prefixes = [
            PRMExample(task_text, tuple(subtasks[: k + 1]), n, context=context, scene=scene)
            for k in range(n)
        ]
        scores = self.predict(prefixes).tolist()
        return aggregate(scores, strategy), scores

    # persistence -----------------------------------------------------------------------
    def save(self, folder: str | Path) -> Path:
        """Write ``prm.pt`` (weights) and ``prm.json`` (config, threshold, history)."""
        torch = _torch()
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        torch.save(self._model.state_dict(), folder / "prm.pt")
        meta = {"config": asdict(self.config), "threshold": self.threshold, "dim": self._dim,
                "history": self.history, "uses_rule": self.rule is not None}
        write_json(folder / "prm.json", meta)
        return folder

    @classmethod
    def load(cls, folder: str | Path, embed: EmbedFn, rule: RuleFn | None = None) -> PRMVerifier:
        """Load a verifier saved by :meth:`save` (give the same embedder and rule scorer)."""
        torch = _torch()
        folder = Path(folder)
        meta = json.loads((folder / "prm.json").read_text())
        if meta["uses_rule"] != (rule is not None):
            raise ValueError(
                f"the PRM in {folder} was trained {'with' if meta['uses_rule'] else 'without'} "
                "rule-judge features; load it the same way"
            )
        config = meta["config"]
        config["hidden"] = tuple(config["hidden"])
        verifier = cls(embed, rule, PRMConfig(**config), meta["threshold"])
        verifier._model = verifier._build(meta["dim"])
        verifier._model.load_state_dict(torch.load(folder / "prm.pt", weights_only=True))
        verifier._model.eval()
        verifier.history = meta["history"]
        return verifier
