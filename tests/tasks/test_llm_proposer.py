"""LLMProposer / Completer: prompt content, parsing, re-prompting and recorded failures.

The client is a ScriptedClient (recorded replies), which exercises the prompt and
parsing code exactly as a model's replies would; real local-model runs are `llm` tests.
"""

from __future__ import annotations

import json

from simjudge.llm import ScriptedClient
from simjudge.pipelines.llm_proposer import Completer, LLMProposer, build_messages
from simjudge.pipelines.proposer import Exemplar, TaskRequest
from simjudge.pipelines.template_proposer import TemplateProposer

GOOD = {
    "scene": {"joint_init": {"joint_0": 0.0}},
    "subtasks": [
        {
            "name": "grasp the handle",
            "kind": "primitive",
            "code": 'rgbs, final_state = grasp_object_link(self, "StorageFurniture", "link_1")\n'
            'success = check_grasped(self, "StorageFurniture", "link_1")',
        },
        {
            "name": "pull the drawer",
            "kind": "reward",
            "action_space": "delta-translation",
            "code": "```python\ndef _compute_reward(self):\n"
            '    q = get_joint_state(self, "StorageFurniture", "joint_0")\n'
            '    low, high = get_joint_limit(self, "StorageFurniture", "joint_0")\n'
            "    return -abs(q - high), q > low + 0.6 * (high - low)\n```",
        },
    ],
}


def test_prompt_has_tree_relevant_parts_exemplars_and_apis():
    request = TaskRequest.resolve("Open Drawer")
    exemplar_solution = TemplateProposer().propose(TaskRequest.resolve("Open Door"))[0]
    messages = build_messages(request, [Exemplar("Open Door", "open it", exemplar_solution, 0.8)])
    text = messages[1]["content"]
    assert "link_1 static handle" in text and "joint_0" in text
    assert "Relevant joints: joint_0" in text
    assert "Open Door" in text and "grasp_object_link" in text
    assert "lower limit is its closed" in messages[0]["content"]


def test_parses_valid_reply_and_strips_code_fences():
    client = ScriptedClient([json.dumps(GOOD)])
    solutions = LLMProposer(client).propose(TaskRequest.resolve("Open Drawer"), n=1, seed=5)
    assert len(solutions) == 1
    solution = solutions[0]
    assert solution.subtasks[1].code.startswith("def _compute_reward")
    assert solution.provenance["backend"] == "scripted"
    assert solution.provenance["seed"] == 5000
    assert solution.scene.objects[0].joint_init == {"joint_0": 0.0}


def test_reprompts_with_error_then_records_failure():
    bad = '{"subtasks": [{"name": "x", "kind": "rl", "code": "pass"}]}'
    client = ScriptedClient([bad, json.dumps(GOOD), bad, bad, bad])
    proposer = LLMProposer(client, retries=2)
    solutions = proposer.propose(TaskRequest.resolve("Open Drawer"), n=2)
    assert len(solutions) == 1  # first candidate fixed on the re-prompt
    assert "invalid" in client.calls[1].messages[-1]["content"]
    assert len(proposer.last_failures) == 1  # second candidate never validated
    assert proposer.last_failures[0]["error"] == "StructuredOutputError"


def test_completer_keeps_prefix():
    request = TaskRequest.resolve("Open Drawer")
    base = LLMProposer(ScriptedClient([json.dumps(GOOD)])).propose(request)[0]
    rest = {"subtasks": [GOOD["subtasks"][1]]}
    completer = Completer(ScriptedClient([json.dumps(rest)]))
    done = completer.complete(request, base.prefix(1), n=1)[0]
    assert done.subtasks[0] == base.subtasks[0]
    assert done.scene == base.scene
    assert done.provenance["prefix_length"] == 1
    assert "already decided" in completer.client.calls[0].messages[1]["content"]


def test_template_completer_keeps_prefix():
    request = TaskRequest.resolve("Open Drawer")
    base = TemplateProposer().propose(request)[0]
    done = TemplateProposer().complete(request, base.prefix(1), n=3, seed=2)
    assert len(done) == 3 and all(d.subtasks[0] == base.subtasks[0] for d in done)
