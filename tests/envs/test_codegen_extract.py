"""Extracting code from LLM answers keeps indentation (unlike RoboGen's line stripping)."""

from __future__ import annotations

from simjudge.envs.codegen import compile_reward, extract_code, extract_code_blocks

ANSWER = """Here is the reward for substep 2.

```python
    def _compute_reward(self):
        total = 0.0
        for i in range(3):
            if i > 0:
                total += i
        return total, total > 2
```

And the scene:

```yaml
- name: Door
```
"""


def test_fenced_block_is_dedented_not_flattened() -> None:
    code = extract_code(ANSWER)
    assert code.splitlines()[0] == "def _compute_reward(self):"
    assert "            total += i" in code
    assert "name: Door" not in code
    assert compile_reward(code, {})(None) == (3.0, True)


def test_multiple_blocks_are_joined_in_order() -> None:
    text = "```py\ndef helper(x):\n    return x\n```\ntext\n```\nsuccess = helper(1) > 0\n```\n"
    assert extract_code_blocks(text) == [
        "def helper(x):\n    return x\n",
        "success = helper(1) > 0\n",
    ]
    assert extract_code(text) == "def helper(x):\n    return x\n\nsuccess = helper(1) > 0\n"


def test_raw_code_and_truncated_fence() -> None:
    assert extract_code("  x = 1\n  if x:\n      y = 2\n") == "x = 1\nif x:\n    y = 2\n"
    assert extract_code("```python\r\nsuccess = True\r\n") == "success = True\n"
