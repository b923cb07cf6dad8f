"""Episode scores: the 0–10 ground truth, Acc@τ / RMSE, test-time scaling, perturbations."""

from __future__ import annotations

import math

import numpy as np
import pytest

from simjudge.envs.articulation import ArticulationTree, JointSpec, LinkSpec
from simjudge.envs.goals import JointGoal, PlaceGoal
from simjudge.judges import JudgeContext, LinkGoal, make_judge
from simjudge.judges.bench import (
    acc_at,
    contrast_summary,
    ground_truth_score,
    perturb_order,
    phi_episode_score,
    process_score,
    rmse,
    scaling_curve,
    score_summary,
    soft_accuracy,
    swap_target,
    to_record,
    truncation_point,
)
from simjudge.judges.bench.runs import episode_section, perturb_section
from tests.judges.bench_helpers import bench_episodes, open_envs


def test_ground_truth_on_known_traces():
    assert ground_truth_score([0.0, 0.5, 1.0], True) == pytest.approx(10.0)
    # monotone failure to 0.9: MP = 0.9, PPL = 0.9 → 10·0.4·0.9
    assert ground_truth_score([0.0, 0.45, 0.9], False) == pytest.approx(3.6)
    # got to 0.8, fell back to 0: MP 0.8, PPL 0 → 10·0.4·0.4
    assert ground_truth_score([0.0, 0.8, 0.0], False) == pytest.approx(1.6)
    assert process_score([0.2, 0.2]) == pytest.approx(0.1)
    assert phi_episode_score([0.0, None], True) is None


def test_accuracy_metrics_on_known_inputs():
    pred, gt = [7.0, 2.0, None, 9.5], [9.0, 5.0, 4.0, 9.0]
    assert acc_at(pred, gt) == 0.5  # |2| ≤ 2 inclusive, |3| misses, invalid misses
    assert rmse(pred, gt) == pytest.approx(math.sqrt((4 + 9 + 0.25) / 3))
    assert soft_accuracy(pred, gt) == pytest.approx((0.96 + 0.91 + 0 + 0.9975) / 4)
    summary = score_summary(pred, gt)
    assert summary["invalid"] == 1 and summary["n"] == 4 and summary["acc@2"] == 0.5
    assert math.isnan(rmse([None], [1.0]))
    with pytest.raises(ValueError):
        acc_at([1.0], [1.0, 2.0])


def test_scaling_curve_pools_the_first_k_samples():
    samples = [[10.0, 4.0, 4.0, 4.0, 4.0], [0.0, None, 6.0, 6.0, 6.0]]
    curve = scaling_curve(samples, [4.0, 6.0], ks=(1, 3, 5))
    assert curve[1]["acc@2"] == 0.0 and curve[1]["rmse"] == pytest.approx(6.0)
    assert curve[3]["acc@2"] == 0.5  # means 6 and 3
    assert curve[5]["acc@2"] == 1.0 and curve[5]["spread_mean"] > 0
    vote = scaling_curve(samples, [4.0, 6.0], ks=(5,), method="vote")
    assert vote[5]["rmse"] == 0.0
    with pytest.raises(ValueError, match="K=6"):
        scaling_curve(samples, [4.0, 6.0], ks=(6,))


def test_perturbation_orders():
    rng = np.random.default_rng(0)
    phi = [0.0, 0.1, 0.2, 0.35, 0.6, 1.0]
    assert perturb_order(6, "reverse", rng) == [5, 4, 3, 2, 1, 0]
    assert perturb_order(6, "truncate", rng, phi) == [0, 1, 2]
    assert truncation_point([0.0, 0.1]) == 1
    for _ in range(20):
        shuffled = perturb_order(3, "shuffle", rng)
        assert sorted(shuffled) == [0, 1, 2] and shuffled != [0, 1, 2]
    assert perturb_order(4, "wrong-target", rng) == [0, 1, 2, 3]
    with pytest.raises(ValueError):
        perturb_order(3, "mirror", rng)


def _tree(n_joints):
    links = [LinkSpec("base", "frame", "heavy")] + [LinkSpec(f"link_{i}", "door", "hinge")
                                                   for i in range(n_joints)]
    joints = [JointSpec(f"joint_{i}", "revolute", "base", f"link_{i}", 0.0, 1.5)
              for i in range(n_joints)]
    return ArticulationTree("Cab-0", "Cab", tuple(links), tuple(joints)).to_dict()


def test_swap_target():
    goal = JointGoal(object="Cab", joint="joint_0", link="link_0")
    two = swap_target(JudgeContext(trees={"Cab": _tree(2)}, goal=goal))
    assert (two.goal.joint, two.goal.link) == ("joint_1", "link_1")
    assert two.extra["target"] == {"object": "Cab", "link": "link_1", "joint": "joint_1"}
    one = swap_target(JudgeContext(trees={"Cab": _tree(1)}, goal=goal))
    assert isinstance(one.goal, LinkGoal) and one.goal.link == "base"
    place = swap_target(JudgeContext(goal=PlaceGoal(object="Bread", target="Bowl")))
    assert (place.goal.object, place.goal.target) == ("Bowl", "Bread")
    assert swap_target(JudgeContext()) is None
    summary = contrast_summary([9.0, 8.0, None], [2.0, 8.0, 1.0])
    assert summary == {"contrast": 3.5, "directional": 0.5, "mean_original": 8.5,
                       "mean_perturbed": 5.0, "n": 2}


@pytest.fixture(scope="module")
def setup():
    envs, contexts = open_envs()
    yield list(bench_episodes()), envs, contexts
    for env in envs.values():
        env.close()


def test_episode_scores_and_contrasts_of_potential_judges(setup):
    episodes, envs, contexts = setup
    gt = [ground_truth_score(e.phi, e.succeeded) for e in episodes]
    exact = episode_section(make_judge("privileged"), episodes, gt, envs, contexts)
    assert exact["acc@2"] == 1.0 and exact["rmse"] == pytest.approx(0.0, abs=1e-9)
    contrasts = perturb_section(make_judge("privileged"), episodes, gt, envs, contexts)
    for kind in ("shuffle", "truncate", "wrong-target", "reverse"):
        row = contrasts[kind]
        assert row["n"] > 0 and row["directional"] == 1.0 and row["contrast"] > 2
        assert row["contrast"] == pytest.approx(row["ground_truth"])
    assert episode_section(make_judge("rule"), episodes, gt, envs, contexts) == "n/a"


def test_to_record_reorders_steps(setup):
    episodes, _, contexts = setup
    episode = episodes[0]
    record = to_record(episode, contexts[episode.task], [2, 1, 0], claim="done")
    assert [s.step for s in record.steps] == [0, 1, 2]
    assert [s.progress for s in record.steps] == [episode.phi[2], episode.phi[1], episode.phi[0]]
    assert record.steps[0].state == episode.summaries[2] and record.outcome["claimed"] == "done"
    assert record.context["extra"]["target"]["object"] == "StorageFurniture"
