"""PRM verifier: focal loss, aggregation, learning a real signal, persistence."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from simjudge.judges.prm import (
    AGGREGATIONS,
    PRMConfig,
    PRMExample,
    PRMVerifier,
    aggregate,
    focal_loss,
)
from simjudge.llm import HashingEmbedder

GRASP = 'rgbs, final_state = grasp_object_link(self, "Cabinet", "{link}")\nsuccess = check_grasped(self, "Cabinet", "{link}")'
PULL = "def _compute_reward(self):\n    q = get_joint_state(self, \"Cabinet\", \"{joint}\")\n    return -abs(q - {target}), q > 0.1"


def _examples(rng: np.random.Generator, n: int) -> list[PRMExample]:
    """Prefixes whose label depends on which link/joint/target the code uses."""
    out = []
    for i in range(n):
        good_link = rng.random() < 0.5
        good_pull = rng.random() < 0.5
        link = "link_1" if good_link else "link_0"
        grasp = ("grasp the handle", "primitive", GRASP.format(link=link))
        out.append(PRMExample("Open Drawer: pull the drawer", (grasp,), 2, int(good_link), f"s{i}"))
        pull = ("pull", "reward", PULL.format(joint="joint_0" if good_pull else "joint_2",
                                               target="high" if good_pull else "3.14"))
        out.append(PRMExample("Open Drawer: pull the drawer", (grasp, pull), 2,
                              int(good_link and good_pull), f"s{i}"))
    return out


def test_focal_loss_reduces_to_bce_and_down_weights_easy_examples():
    logits = torch.tensor([3.0, -2.0, 0.1])
    targets = torch.tensor([1.0, 0.0, 1.0])
    bce = torch.nn.functional.binary_cross_entropy_with_logits(logits, targets)
    assert torch.isclose(focal_loss(logits, targets, gamma=0.0, alpha=None), bce)
    assert focal_loss(logits, targets, gamma=2.0, alpha=None) < bce


def test_aggregations():
    scores = [0.9, 0.5, 0.8]
    assert aggregate(scores, "mean") == pytest.approx(np.mean(scores))
    assert aggregate(scores, "geometric") == pytest.approx(np.prod(scores) ** (1 / 3))
    assert aggregate(scores, "min") == 0.5 and aggregate(scores, "max") == 0.9
    assert aggregate(scores, "last") == 0.8
    assert set(AGGREGATIONS) == {"mean", "geometric", "min", "max", "last"}
    with pytest.raises(ValueError, match="unknown aggregation"):
        aggregate(scores, "median")


def test_learns_held_out_signal_and_round_trips(tmp_path):
    rng = np.random.default_rng(0)
    train, test = _examples(rng, 60), _examples(rng, 30)
    embed = HashingEmbedder(dim=256)
    verifier = PRMVerifier(embed.embed, config=PRMConfig(epochs=60, seed=1)).fit(train)
    assert verifier.history[-1] < verifier.history[0]
    p = verifier.predict(test)
    labels = np.array([e.label for e in test])
    accuracy = float(((p > 0.5) == labels).mean())
    assert accuracy > 0.85, accuracy
    loaded = PRMVerifier.load(verifier.save(tmp_path / "prm"), embed.embed)
    np.testing.assert_allclose(loaded.predict(test), p, atol=1e-6)
    score, per_prefix = loaded.score_solution("Open Drawer: pull the drawer", test[1].subtasks)
    assert len(per_prefix) == 2 and score == per_prefix[-1]


def test_needs_both_classes():
    one_class = [PRMExample("t", (("a", "reward", "x"),), 1, 1)]
    with pytest.raises(ValueError, match="both classes"):
        PRMVerifier(HashingEmbedder().embed).fit(one_class)
    with pytest.raises(RuntimeError, match="not trained"):
        PRMVerifier(HashingEmbedder().embed).predict(one_class)


def test_the_scene_is_a_feature():
    """VERGSA verifies scene + subtasks: the same subtasks in another scene score differently."""
    from simjudge.judges.prm import scene_text

    verifier = PRMVerifier(embed=HashingEmbedder().embed)
    subtasks = (("pull", "reward", PULL.format(joint="joint_0", target=0.5)),)
    closed = scene_text({"objects": [{"name": "Cabinet", "asset": "StorageFurniture-0",
                                      "joint_init": {"joint_0": 0.0}}]})
    opened = scene_text({"objects": [{"name": "Cabinet", "asset": "StorageFurniture-0",
                                      "joint_init": {"joint_0": 0.9}}]})
    assert "joint_0=0.90" in opened and closed != opened
    a, b = verifier.features([PRMExample("open the drawer", subtasks, 1, scene=closed),
                              PRMExample("open the drawer", subtasks, 1, scene=opened)])
    assert a.shape == b.shape and not np.allclose(a, b)
