"""JSON extraction, schema validation and re-prompting (scripted replies)."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from simjudge.llm import ScriptedClient, StructuredOutputError, complete_structured
from simjudge.llm.structured import _check, extract_json, validate_json


@pytest.mark.parametrize("text, expected", [
    ('{"a": 1}', {"a": 1}),
    ('  [1, 2]\n', [1, 2]),
    ('Here you go:\n```json\n{"a": [1, {"b": null}]}\n```\nDone.', {"a": [1, {"b": None}]}),
    ('```\n{"a": 2}\n```', {"a": 2}),
    ('The answer is {"a": 3} as requested {"ignored": true}', {"a": 3}),
    ('prefix {not json} then {"a": 4}', {"a": 4}),
])
def test_extract_json(text, expected):
    assert extract_json(text) == expected


def test_extract_json_fails_clearly():
    with pytest.raises(ValueError, match="no JSON object or array"):
        extract_json("no json here")


SCHEMA = {
    "type": "object",
    "properties": {
        "kind": {"enum": ["primitive", "reward"]},
        "steps": {"type": "array", "items": {"$ref": "#/$defs/step"}, "minItems": 1},
        "score": {"type": "number", "minimum": 0, "maximum": 1},
    },
    "required": ["kind", "steps"],
    "additionalProperties": False,
    "$defs": {"step": {"type": "object", "required": ["name"],
                       "properties": {"name": {"type": "string", "minLength": 1}}}},
}


@pytest.mark.parametrize("checker", [validate_json, lambda v, s: _check(v, s, s)])
def test_validation_errors_name_the_path(checker):
    assert checker({"kind": "reward", "steps": [{"name": "grasp"}], "score": 0.5}, SCHEMA) == []
    errors = " | ".join(checker({"kind": "rl", "steps": [{"name": ""}, {}], "x": 1}, SCHEMA))
    assert "rl" in errors and "steps" in errors and "name" in errors and "x" in errors


def test_builtin_checker_types():
    assert _check(True, {"type": "integer"}, {}) != []
    assert _check(3, {"type": "number"}, {}) == []
    assert _check(None, {"type": ["string", "null"]}, {}) == []
    assert _check(2, {"anyOf": [{"type": "string"}, {"minimum": 3}]}, {}) != []


class Step(BaseModel):
    name: str
    kind: str


def test_pydantic_model_schema_and_reprompt():
    client = ScriptedClient(['{"name": "grasp"}', '{"name": "grasp", "kind": "primitive"}'])
    value, attempts = complete_structured(
        client, [{"role": "user", "content": "One step."}], Step, retries=1)
    assert value == Step(name="grasp", kind="primitive")
    assert [a.ok for a in attempts] == [False, True] and "kind" in attempts[0].error
    first, second = client.calls
    assert '"kind"' in first.messages[-1]["content"]  # schema appended to the request
    assert first.json_schema is None  # scripted backend cannot constrain decoding
    assert second.messages[-2]["content"] == '{"name": "grasp"}'


def test_retries_zero_raises_after_one_attempt():
    client = ScriptedClient(["nope"])
    with pytest.raises(StructuredOutputError, match="after 1 attempts") as info:
        complete_structured(client, [{"role": "user", "content": "x"}], SCHEMA, retries=0)
    assert info.value.attempts[0].response.text == "nope"
