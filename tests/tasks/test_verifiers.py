"""Pre-execution ranking by the rule verifier."""

from __future__ import annotations

from simjudge.pipelines.acquire import rank_candidates
from simjudge.pipelines.proposer import TaskRequest
from simjudge.pipelines.template_proposer import TemplateProposer
from simjudge.pipelines.verifiers import make_verifier, rule_score
from simjudge.tasks.spec import Solution


def _broken(solution: Solution, old: str, new: str) -> Solution:
    subtasks = [s.model_copy(update={"code": s.code.replace(old, new)}) for s in solution.subtasks]
    return solution.model_copy(update={"subtasks": tuple(subtasks)})


def test_rule_verifier_ranks_a_correct_solution_first():
    request = TaskRequest.resolve("Open Drawer")
    good = TemplateProposer().propose(request)[0]
    wrong_link = _broken(good, '"link_1"', '"link_7"')
    wrong_api = _broken(good, "get_eef_pos(self)", "self.get_eef_pos()")
    score_good, details = rule_score(request, good)
    assert score_good == 1.0, details
    assert rule_score(request, wrong_link)[0] < 1.0
    ranking, info = rank_candidates(
        request, {"a": wrong_link, "b": wrong_api, "c": good}, make_verifier("rule")
    )
    assert ranking[0] == "c"
    assert any("link_7" in e for s in info["a"]["subtasks"] for e in s["errors"])


def test_no_verifier_keeps_proposal_order():
    request = TaskRequest.resolve("Open Drawer")
    solutions = dict(enumerate(TemplateProposer().propose(request, n=3)))
    assert rank_candidates(request, solutions, make_verifier("none"))[0] == [0, 1, 2]
