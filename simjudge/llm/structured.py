"""Structured (JSON) output from any client, with validation and re-prompting.

Small local models often wrap JSON in prose or code fences, or miss a required field.
:func:`complete_structured` asks for JSON (schema-constrained where the backend can),
extracts the first JSON value from the reply, validates it against a JSON schema or a
pydantic model, and on failure re-prompts with the validation error, up to ``retries``
times. Every attempt is kept: callers that give up record the failure as a verdict.

Validation uses the ``jsonschema`` package when installed, else a built-in checker of the
common keywords (type, properties, required, additionalProperties, items, enum, const,
min/max length/items, minimum/maximum, anyOf/oneOf/allOf, local ``$ref``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from .base import LLMClient, LLMError, LLMResponse

__all__ = [
    "Attempt",
    "StructuredOutputError",
    "complete_structured",
    "extract_json",
    "validate_json",
]

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)
_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,), "array": (list,), "string": (str,), "boolean": (bool,),
    "integer": (int,), "number": (int, float), "null": (type(None),),
}


@dataclass(frozen=True)
class Attempt:
    """One try of :func:`complete_structured`.

    Attributes:
        response: The model's reply.
        error: Why it was rejected, or None when it validated.
    """

    response: LLMResponse
    error: str | None = None

    @property
    def ok(self) -> bool:
        """True when the reply parsed and validated."""
        return self.error is None


class StructuredOutputError(LLMError):
    """No attempt produced valid JSON; ``attempts`` holds every reply and its error."""

    def __init__(self, message: str, attempts: Sequence[Attempt]) -> None:
        super().__init__(message)
        self.attempts = list(attempts)


def extract_json(text: str) -> Any:
    """The first JSON object or array in ``text``.

    That is the whole text, a fenced block, or the first parseable value embedded in prose.

    Raises:
        ValueError: No JSON value found (the message quotes the start of the text).
    """
    stripped = text.strip()
    try:
        return json.loads(stripped)
    except json.JSONDecodeError:
        pass
    for block in _FENCE.findall(text):
        try:
            return json.loads(block.strip())
        except json.JSONDecodeError:
            continue
    decoder = json.JSONDecoder()
    for match in re.finditer(r"[\[{]", text):
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except json.JSONDecodeError:
            continue
        return value
    raise ValueError(f"no JSON object or array found in the reply: {stripped[:120]!r}")


def _resolve(schema: Mapping[str, Any], root: Mapping[str, Any]) -> Mapping[str, Any]:
    ref = schema.get("$ref")
    if not isinstance(ref, str) or not ref.startswith("#/"):
        return schema
    node: Any = root
    for part in ref[2:].split("/"):
        node = node[part]
    return _resolve(node, root)


def _type_ok(value: Any, expected: str | Sequence[str]) -> bool:
    names = [expected] if isinstance(expected, str) else list(expected)
    for name in names:
        if name in ("integer", "number") and isinstance(value, bool):
            continue
        if name == "integer" and isinstance(value, float) and value.is_integer():
            return True
        if isinstance(value, _TYPES.get(name, ())):
            return True
    return False


def _check_object(value: dict, schema: Mapping[str, Any], root: Mapping[str, Any],
                  path: str) -> list[str]:
    errors = [f"{path}: missing required property {key!r}"
              for key in schema.get("required", ()) if key not in value]
    props = schema.get("properties", {})
    extra = schema.get("additionalProperties", True)
    for key, item in value.items():
        if key in props:
            errors += _check(item, props[key], root, f"{path}.{key}")
        elif extra is False:
            errors.append(f"{path}: unexpected property {key!r} (allowed: {sorted(props)})")
        elif isinstance(extra, Mapping):
            errors += _check(item, extra, root, f"{path}.{key}")
    return errors


def _check_bounds(value: Any, schema: Mapping[str, Any], path: str) -> list[str]:
    errors = []
    size = len(value) if isinstance(value, str | list | dict) else None
    for key, bad in (("minLength", lambda n, b: n < b), ("maxLength", lambda n, b: n > b),
                     ("minItems", lambda n, b: n < b), ("maxItems", lambda n, b: n > b)):
        if key in schema and size is not None and bad(size, schema[key]):
            errors.append(f"{path}: length {size} violates {key}={schema[key]}")
    if isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            errors.append(f"{path}: {value} < minimum {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            errors.append(f"{path}: {value} > maximum {schema['maximum']}")
    return errors


def _check(value: Any, schema: Mapping[str, Any], root: Mapping[str, Any],
           path: str = "$") -> list[str]:
    schema = _resolve(schema, root)
    if "type" in schema and not _type_ok(value, schema["type"]):
        return [f"{path}: expected {schema['type']}, got {type(value).__name__} {value!r:.60}"]
    if "enum" in schema and value not in schema["enum"]:
        return [f"{path}: {value!r} is not one of {schema['enum']}"]
    if "const" in schema and value != schema["const"]:
        return [f"{path}: must be {schema['const']!r}, got {value!r}"]
    errors = _check_bounds(value, schema, path)
    if isinstance(value, dict):
        errors += _check_object(value, schema, root, path)
    if isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        for i, item in enumerate(value):
            errors += _check(item, schema["items"], root, f"{path}[{i}]")
    for sub in schema.get("allOf", ()):
        errors += _check(value, sub, root, path)
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if options and all(_check(value, sub, root, path) for sub in options):
            errors.append(f"{path}: matches none of the {key} alternatives")
    return errors


def validate_json(value: Any, schema: Mapping[str, Any]) -> list[str]:
    """Validation errors of ``value`` against a JSON schema (empty list = valid)."""
    try:
        import jsonschema
    except ImportError:
        return _check(value, schema, schema)
    validator = jsonschema.validators.validator_for(schema)(schema)
    return [f"${''.join(f'[{p}]' if isinstance(p, int) else f'.{p}' for p in e.absolute_path)}"
            f": {e.message}" for e in validator.iter_errors(value)]


def _as_schema(schema: Mapping[str, Any] | type[BaseModel]) -> dict[str, Any]:
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        return schema.model_json_schema()
    if isinstance(schema, Mapping):
        return dict(schema)
    raise TypeError(f"schema must be a JSON-schema dict or a pydantic model class, got {schema!r}")


def _parse(text: str, schema: Mapping[str, Any] | type[BaseModel],
           json_schema: Mapping[str, Any]) -> tuple[Any, str | None]:
    try:
        value = extract_json(text)
    except ValueError as exc:
        return None, str(exc)
    if isinstance(schema, type):
        try:
            return schema.model_validate(value), None
        except ValidationError as exc:
            return None, "; ".join(
                f"$.{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
    errors = validate_json(value, json_schema)
    return (value, None) if not errors else (None, "; ".join(errors[:8]))


def complete_structured(
    client: LLMClient,
    messages: Sequence[Mapping[str, Any]],
    schema: Mapping[str, Any] | type[BaseModel],
    *,
    retries: int = 2,
    temperature: float = 0.0,
    max_tokens: int = 1024,
    seed: int | None = None,
    instruct: bool = True,
    constrain: bool = True,
) -> tuple[Any, list[Attempt]]:
    """Ask for JSON matching ``schema``; re-prompt with the error on failure.

    Args:
        client: Any client.
        messages: The conversation; the last message should be the user's request.
        schema: A JSON schema dict, or a pydantic model class (then the result is an
            instance of it).
        retries: Re-prompts after the first attempt (total attempts = retries + 1).
        temperature: Sampling temperature of every attempt.
        max_tokens: Token budget of each attempt.
        seed: Sampling seed of every attempt.
        instruct: Append the schema and a "reply with JSON only" instruction to the
            last user message (helps backends that cannot constrain decoding).
        constrain: Pass the schema as ``json_schema`` to backends that support it.

    Returns:
        ``(parsed value, attempts)``.

    Raises:
        StructuredOutputError: Every attempt failed; ``.attempts`` has them all.
    """
    if retries < 0:
        raise ValueError(f"retries must be >= 0, got {retries}")
    json_schema = _as_schema(schema)
    convo = [dict(m) for m in messages]
    if instruct and convo and convo[-1]["role"] == "user":
        ask = ("\n\nReply with only a JSON value matching this JSON schema, no prose:\n"
               + json.dumps(json_schema, separators=(",", ":")))
        content = convo[-1]["content"]
        if isinstance(content, (list, tuple)):  # content parts (text and images)
            convo[-1]["content"] = [*content, {"type": "text", "text": ask.lstrip()}]
        else:
            convo[-1]["content"] = content + ask
    use_schema = json_schema if constrain and client.supports_json_schema else None
    attempts: list[Attempt] = []
    for _ in range(retries + 1):
        response = client.complete(convo, temperature=temperature, max_tokens=max_tokens,
                                   seed=seed, json_schema=use_schema)
        value, error = _parse(response.text, schema, json_schema)
        attempts.append(Attempt(response, error))
        if error is None:
            return value, attempts
        convo += [
            {"role": "assistant", "content": response.text},
            {"role": "user", "content": f"That reply is invalid: {error}. Reply again with "
                                        "only the corrected JSON."},
        ]
    raise StructuredOutputError(
        f"no valid JSON after {len(attempts)} attempts from {client.backend}:{client.model}; "
        f"last error: {attempts[-1].error}", attempts)
