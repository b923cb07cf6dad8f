"""Static checks of generated code: the hostile corpus is rejected at compile time."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from simjudge.envs.codegen import (
    CodeResourceError,
    CodeSyntaxError,
    DisallowedCodeError,
    GeneratedCodeError,
    InvalidOutputError,
    MissingOutputError,
    check_source,
    compile_primitive_block,
    compile_reward,
    compile_success,
)

API = {
    "get_position": lambda view, name: np.zeros(3),
    "get_joint_state": lambda view, obj, joint: 0.0,
}


def reward_with(snippet: str) -> str:
    """Put ``snippet`` on line 2 of a reward function."""
    return f"def _compute_reward(self):\n    {snippet}\n    return 0.0, False\n"


HOSTILE_STATIC = [
    "x = ().__class__.__bases__[0].__subclasses__()",
    "x = __import__('os')",
    "import os",
    "from os import system",
    "x = open('/etc/passwd')",
    "x = eval('1')",
    "exec('x = 1')",
    "x = getattr(np, 'load')",
    "x = np.load('weights.npy')",
    "np.save('x.npy', np.zeros(3))",
    "x = np.fromfile('x.bin')",
    "x = np.ctypeslib",
    "x = (lambda: 0).__globals__",
    "x = self.__dict__",
    "x = self.env",
    "x = self['env']",
    "x = '{0.__class__}'.format(1)",
    "x = os.system('ls')",
    "x = sys.modules",
    "x = builtins.open",
    "x = globals()",
    "x = type(1)",
    "x = object",
    "x = vars()",
    "breakpoint()",
    "x = compile('1', 'f', 'eval')",
    "x = input()",
    "x = super()",
    "x = (i for i in range(3)).gi_frame",
    "x = f'{np.__name__}'",
    "x = f'{1:>{10**9}}'",
    "x = '%s' % 1",
    "global y",
    "x = [y for y in range(3)][0].__class__",
    "x = np.ndarray((10**9,))",
    "x = np.random.rand(3)",
    "x = np.linalg.lstsq",
    "x = math.factorial(100000)",
    "x = getattr",
    "with open('f') as f: pass",
    "x = get_position(self, 'a').tofile('f')",
]


@pytest.mark.parametrize("snippet", HOSTILE_STATIC)
def test_hostile_code_is_rejected_with_line(snippet: str) -> None:
    with pytest.raises(DisallowedCodeError) as info:
        compile_reward(reward_with(snippet), API)
    assert info.value.line == 2, str(info.value)
    assert str(info.value).startswith("line 2: ")


@pytest.mark.parametrize(
    "source",
    [
        "class A:\n    pass\n",
        "def _compute_reward(self):\n    try:\n        x = 1\n    except:\n        pass\n    return 0.0, False\n",
        "def _compute_reward(self):\n    yield 1\n",
        "async def _compute_reward(self):\n    return 0.0, False\n",
        "def _compute_reward(self):\n    def inner():\n        return 1\n    return 0.0, False\n",
        "def _compute_reward(self):\n    raise ValueError('x')\n",
        "@staticmethod\ndef _compute_reward(self):\n    return 0.0, False\n",
    ],
)
def test_disallowed_syntax(source: str) -> None:
    with pytest.raises(DisallowedCodeError):
        compile_reward(source, API)


def test_call_to_open_message_lists_allowed_functions() -> None:
    with pytest.raises(DisallowedCodeError) as info:
        compile_reward(reward_with("x = open('/etc/passwd')"), API)
    message = str(info.value)
    assert "line 2: call to 'open' is not allowed" in message
    assert "get_joint_state" in message and "np.*" in message


def test_unknown_function_suggests_closest_name() -> None:
    with pytest.raises(DisallowedCodeError) as info:
        compile_reward(reward_with("x = get_joint_stat(self, 'Door', 'joint_0')"), API)
    assert "did you mean 'get_joint_state'" in str(info.value)


def test_self_attribute_message_points_to_state_api() -> None:
    with pytest.raises(DisallowedCodeError) as info:
        compile_reward(reward_with("x = self.sim"), API)
    assert "use the state API functions, e.g. get_position(self, name)" in str(info.value)


def test_numpy_attribute_suggestion() -> None:
    with pytest.raises(DisallowedCodeError) as info:
        compile_reward(reward_with("x = np.lnalg"), API)
    assert "np.linalg" in str(info.value)


def test_recursion_is_rejected() -> None:
    source = (
        "def helper(n):\n    return helper(n + 1)\n\n"
        "def _compute_reward(self):\n    return float(helper(0)), False\n"
    )
    with pytest.raises(DisallowedCodeError) as info:
        compile_reward(source, API)
    assert "recursion" in str(info.value) and info.value.line == 1


def test_mutual_recursion_is_rejected() -> None:
    source = (
        "def a(n):\n    return b(n)\n\ndef b(n):\n    return a(n)\n\n"
        "def _compute_reward(self):\n    return float(a(0)), False\n"
    )
    with pytest.raises(DisallowedCodeError, match="recursion"):
        compile_reward(source, API)


def test_functions_cannot_be_passed_as_values() -> None:
    source = (
        "def twice(f):\n    return f(f)\n\n"
        "def _compute_reward(self):\n    return twice(twice), False\n"
    )
    with pytest.raises(DisallowedCodeError):
        compile_reward(source, API)


@pytest.mark.parametrize(
    "snippet", ["x = [0] * 10**10", "x = 'a' * 10**9", "x = 2 ** 10**8", "x = 1 << 10**6"]
)
def test_constant_bombs_are_rejected_statically(snippet: str) -> None:
    with pytest.raises(CodeResourceError) as info:
        compile_reward(reward_with(snippet), API)
    assert info.value.line == 2


def test_syntax_error_has_line() -> None:
    with pytest.raises(CodeSyntaxError) as info:
        compile_reward("def _compute_reward(self):\n    x = (1,\n    return x\n", API)
    assert info.value.line is not None and "invalid syntax" in str(info.value)


def test_missing_return_is_reported() -> None:
    with pytest.raises(MissingOutputError, match="never returns"):
        compile_reward("def _compute_reward(self):\n    reward = 1.0\n", API)


def test_reward_returning_three_values_is_reported() -> None:
    with pytest.raises(InvalidOutputError, match="exactly two"):
        compile_reward("def _compute_reward(self):\n    return 1.0, True, 3\n", API)


def test_missing_reward_function_is_reported() -> None:
    with pytest.raises(MissingOutputError, match="_compute_reward"):
        compile_reward("reward = 1.0\n", API)


def test_primitives_are_not_allowed_in_rewards() -> None:
    with pytest.raises(DisallowedCodeError, match="only allowed in primitive blocks"):
        compile_reward(reward_with("x = grasp_object(self, 'Cube')"), API)


def test_state_api_names_not_provided_are_reported() -> None:
    with pytest.raises(DisallowedCodeError, match="not available here"):
        compile_reward(reward_with("x = get_bounding_box(self, 'Cube')"), API)


def test_check_source_reports_every_issue() -> None:
    source = (
        "import os\n"
        "def _compute_reward(self):\n"
        "    x = open('f')\n"
        "    y = self.env\n"
        "    return 0.0, False\n"
    )
    issues = check_source(source, "reward", api_names=API)
    assert [i.line for i in issues] == [1, 3, 4]
    assert {i.code for i in issues} == {"disallowed-syntax", "disallowed-name", "self-attribute"}
    with pytest.raises(DisallowedCodeError) as info:
        compile_reward(source, API)
    assert len(info.value.issues) == 3 and "and 2 more" in str(info.value)


def test_check_source_accepts_valid_code() -> None:
    assert check_source("success = get_joint_state(self, 'Door', 'joint_0') > 0.5", "success") == []


def test_primitive_block_requires_success() -> None:
    source = 'rgbs, final_state = grasp_object_link(self, "Obj", "link_0")\n'
    with pytest.raises(MissingOutputError, match="success"):
        compile_primitive_block(source, API)


def test_unassigned_primitive_is_a_warning() -> None:
    source = 'grasp_object(self, "Cube")\nsuccess = True\n'
    issues = check_source(source, "primitive")
    assert [(i.severity, i.code, i.line) for i in issues] == [
        ("warning", "unassigned-primitive", 1)
    ]
    assert compile_primitive_block(source, API).warnings == tuple(issues)


def test_success_without_output_is_reported() -> None:
    with pytest.raises(MissingOutputError):
        compile_success("x = 1\n", API)


def test_errors_pickle_with_line_and_issues() -> None:
    with pytest.raises(GeneratedCodeError) as info:
        compile_reward("import os\nimport sys\n", API)
    copy = pickle.loads(pickle.dumps(info.value))
    assert type(copy) is type(info.value)
    assert (copy.line, str(copy), copy.issues) == (
        info.value.line,
        str(info.value),
        info.value.issues,
    )
