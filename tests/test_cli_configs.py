"""The command line generated from one typed config per command.

Every command's flags come from its config dataclass; ``--config FILE.yaml`` loads the same
fields (flags win); every run directory records the full config.
"""

from __future__ import annotations

import dataclasses
import doctest
import importlib
import json
import re
import shlex
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest
import yaml

from simjudge.cli import COMMANDS, build_parser, main
from simjudge.cli_configs import (
    CONFIG_DEST,
    add_config_arguments,
    config_from_args,
    flag_of,
    leaf_parsers,
)
from simjudge.pipelines.configs import AcquireConfig, DatasetBuildConfig, ExecuteConfig
from simjudge.pipelines.judge_bench import DEFAULT_TASKS, ORACLE_TASKS, JudgeBenchConfig
from simjudge.tasks.spec.config import (
    ConfigError,
    config_fields,
    config_from_dict,
    config_to_dict,
    load_config,
)

ROOT = Path(__file__).resolve().parent.parent

OLD_FLAGS: dict[tuple[str, ...], set[str]] = {
    ("assets", "list"): {"--json"},
    ("assets", "show"): {"asset_id"},
    ("assets", "generate"): {"--out"},
    ("tasks", "list"): {"--json"},
    ("render",): {"task", "--out", "--camera", "--seed"},
    ("demo",): {"--task", "--out", "--seed"},
    ("execute",): {"solution", "--out", "--seed", "--budget-steps", "--continue-on-failure",
                   "--reward-solver", "--n-envs", "--no-resume", "--no-video", "--skills"},
    ("skills", "list"): {"--root", "--json"},
    ("skills", "replay"): {"skill_id", "--root", "--video"},
    ("judge-bench",): {"--judge", "--pairs", "--neutral", "--tasks", "--seed", "--out",
                       "--state-noise", "--ks", "--llm", "--llm-episodes", "--plan-cases",
                       "--sections", "--refresh"},
    ("acquire",): {"--task", "--description", "--object", "--candidates", "--proposer",
                   "--model", "--llm-cache", "--temperature", "--max-tokens", "--verifier",
                   "--judge-proposer", "--prm", "--strategy", "--execute", "--reward-solver",
                   "--budget-steps", "--pool", "--no-pool", "--top-k", "--seed", "--out",
                   "--resume"},
    ("pool", "list"): {"--pool"},
    ("pool", "show"): {"--pool", "name"},
    ("pool", "search"): {"--pool", "text", "-k"},
    ("dataset", "build"): {"--tasks", "--base", "--completions", "--proposer", "--model",
                           "--llm-cache", "--reward-solver", "--budget-steps", "--seed",
                           "--out"},
    ("prm", "train"): {"--data", "--out", "--split", "--test-tasks", "--epochs", "--no-rule",
                       "--seed"},
    ("prm", "eval"): {"--data", "--out", "--split", "--test-tasks", "--epochs", "--no-rule",
                      "--seed"},
}
"""Every command and flag of the hand-written parser this one replaced."""


@pytest.fixture(scope="module")
def leaves():
    return leaf_parsers(build_parser())


def _spellings(parser) -> set[str]:
    found = set()
    for action in parser._actions:
        found |= set(action.option_strings) if action.option_strings else {action.dest}
    return found


def _parse(argv: list[str]) -> Any:
    return config_from_args(build_parser().parse_args(argv))


# ----------------------------------------------------------------------------------
# the parser is the configs
# ----------------------------------------------------------------------------------
def test_same_commands_and_flags_as_before(leaves):
    assert set(leaves) == set(COMMANDS)
    assert set(OLD_FLAGS) <= set(COMMANDS)  # every old command kept; new ones may be added
    for path, flags in OLD_FLAGS.items():
        missing = flags - _spellings(leaves[path])
        assert not missing, f"simjudge {' '.join(path)} lost {sorted(missing)}"


@pytest.mark.parametrize("path", list(COMMANDS), ids=" ".join)
def test_parser_exposes_exactly_the_config_fields(leaves, path):
    cls = COMMANDS[path].config
    dests = {a.dest for a in leaves[path]._actions if a.dest != "help"}
    assert dests == {f.name for f in dataclasses.fields(cls)} | {CONFIG_DEST}
    assert "--config" in _spellings(leaves[path])


def _help_blocks(text: str) -> dict[str, str]:
    """First spelling of each argument -> its help entry on one line."""
    blocks: dict[str, str] = {}
    key = None
    for line in text.splitlines():
        if re.match(r"  \S", line):
            key = line.split()[0].rstrip(",")
            blocks[key] = line
        elif key and line.startswith("   "):
            blocks[key] += " " + line.strip()
        else:
            key = None
    return blocks


@pytest.mark.parametrize("path", list(COMMANDS), ids=" ".join)
def test_help_shows_each_fields_doc_and_default(leaves, path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "2000")  # one line per option
    lines = _help_blocks(leaves[path].format_help())
    for field in config_fields(COMMANDS[path].config):
        line = lines[flag_of(field)]
        first_words = " ".join(field.doc.replace("``", "").split()[:3])
        assert first_words in line, (flag_of(field), line)
        if field.required and not field.cli.get("positional"):
            assert "(required)" in line
        elif not field.required and "(default" not in field.doc:
            assert re.search(r"\(default: [^)]+\)", line), line


def test_help_defaults_are_the_config_defaults(leaves):
    execute = _help_blocks(leaves[("execute",)].format_help())
    assert re.search(r"\{sac,mpc,oracle\} .*\(default: sac\)", execute["--reward-solver"])
    assert re.search(r"subprocesses.*\(default: 1\)", execute["--n-envs"])
    assert re.search(r"--no-resume .*\(default: true\)", execute["--resume"])
    assert "(required)" in execute["--out"] and "(default" not in execute["--out"]
    bench = _help_blocks(leaves[("judge-bench",)].format_help())
    assert re.search(r"Labelled pulse pairs.*\(default: 300\)", bench["--pairs"])
    assert bench["--ks"].endswith("(default: 1,3,5)")
    assert bench["--tasks"].endswith("(default: default)")
    assert bench["--judge"].endswith("(default: privileged)")
    dataset = _help_blocks(leaves[("dataset", "build")].format_help())
    assert dataset["--reward-solver"].endswith("(default: mpc)")


def _readme_invocations() -> list[list[str]]:
    """Command lines in the shell blocks (```bash or indented) of the README and the docs."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    text = "\n".join(p.read_text() for p in pages).replace("\\\n", " ")
    found = []
    fenced = False
    for raw in text.splitlines():
        if raw.startswith("```"):
            fenced = raw.strip() == "```bash"
            continue
        line = raw.strip().split(" # ")[0].replace("[", "").replace("]", "")
        if not line.startswith("simjudge ") or not (fenced or raw.startswith("    ")):
            continue
        for command in line.split(" ; "):
            if "..." in command or "--help" in command.split():
                continue
            words = shlex.split(command)[1:]
            ops = [i for i, w in enumerate(words) if w in ("&&", "||", "|", ";", "&", ">")]
            found.append(words[: ops[0]] if ops else words)  # the simjudge command alone
    return found


def test_every_readme_and_makefile_invocation_parses(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bench.yaml").write_text("pairs: 300\nsections: [pairs]\n")
    invocations = _readme_invocations()
    assert len(invocations) >= 15
    make = (ROOT / "Makefile").read_text().replace("\\\n", " ")
    demo = next(line for line in make.splitlines() if "simjudge acquire" in line)
    invocations.append(shlex.split(demo.split("simjudge", 1)[1]))
    for argv in invocations:
        path = (argv[0],) if (argv[0],) in COMMANDS else tuple(argv[:2])
        assert isinstance(_parse(argv), COMMANDS[path].config), argv


def test_existing_spellings_mean_what_they_meant():
    bench = _parse(["judge-bench", "--judge", "privileged", "--judge", "noisy:sigma=0.05",
                    "--tasks", "OpenDrawer-v0", "--state-noise", "0.01,0.05", "--ks", "1,3",
                    "--plan-cases", "none"])
    assert bench.judges == ("privileged", "noisy:sigma=0.05")  # commas inside a spec kept
    assert bench.tasks == ("OpenDrawer-v0",) and bench.state_noise == (0.01, 0.05)
    assert bench.ks == (1, 3) and bench.plan_cases is None
    assert _parse(["judge-bench"]).tasks == DEFAULT_TASKS
    assert _parse(["judge-bench", "--tasks", "oracle"]).tasks == ORACLE_TASKS
    acquire = _parse(["acquire", "--task", "Open Door", "--no-pool", "--resume", "--out", "x"])
    assert acquire.use_pool is False and acquire.resume is True and acquire.out == "x"
    assert _parse(["acquire", "--task", "t", "--out", "x"]).use_pool is True
    execute = _parse(["execute", "my.yaml", "--out", "x", "--no-resume", "--no-video",
                      "--continue-on-failure", "--budget-steps", "50000"])
    assert (execute.solution, execute.resume, execute.video) == ("my.yaml", False, False)
    assert execute.continue_on_failure and execute.budget_steps == 50000
    prm = _parse(["prm", "eval", "--data", "d", "--out", "o", "--no-rule",
                  "--test-tasks", "Open Drawer,Open Door"])
    assert prm.rule is False and prm.test_tasks == ("Open Drawer", "Open Door")
    assert _parse(["pool", "search", "open the fridge", "-k", "3"]).k == 3
    dataset = _parse(["dataset", "build", "--tasks", "Open Drawer,Open Door", "--out", "d"])
    assert dataset.tasks == ("Open Drawer", "Open Door") and dataset.reward_solver == "mpc"


def test_bad_values_are_usage_errors(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["execute", "OpenDrawer-v0"])
    assert exc.value.code == 2 and "required: --out" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["judge-bench", "--pairs", "many"])
    assert "--pairs: expected an integer, got 'many'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["execute", "x", "--out", "o", "--reward-solver", "ppo"])
    assert "--reward-solver: expected one of 'sac', 'mpc', 'oracle', got 'ppo'" in (
        capsys.readouterr().err)


# ----------------------------------------------------------------------------------
# --config FILE.yaml
# ----------------------------------------------------------------------------------
SPECIAL = {"sections": ("rules", "pairs"), "tasks": ("OpenDrawer-v0", "OpenDoor-v0")}


def _changed(field) -> Any:
    """A valid value different from the field's default."""
    if field.name in SPECIAL:
        return SPECIAL[field.name]
    tp = field.type
    args = [a for a in typing.get_args(tp) if a is not type(None)]
    inner = args[0] if len(args) == 1 and type(None) in typing.get_args(tp) else tp
    if typing.get_origin(inner) is tuple:
        element = typing.get_args(inner)[0]
        return (element(2), element(3)) if element is not str else ("a b", "c")
    if typing.get_origin(inner) is Literal:
        return next(c for c in reversed(typing.get_args(inner)) if c != field.default)
    if inner is bool:
        return not field.default
    if inner is int:
        return 7 if field.default in (None, dataclasses.MISSING) else field.default + 1
    if inner is float:
        return field.default + 0.25
    return "some value"


def _changed_config(cls: type) -> Any:
    return config_from_dict(cls, {f.name: _changed(f) for f in config_fields(cls)})


def _argv(path: tuple[str, ...], config: Any) -> list[str]:
    argv = list(path)
    for field in config_fields(type(config)):
        value = getattr(config, field.name)
        flag = flag_of(field)
        if field.cli.get("positional"):
            argv.append(value)
        elif isinstance(value, bool):
            argv.append(flag if value else field.cli.get("negative") or "--no-" + flag[2:])
        elif isinstance(value, tuple) and field.cli.get("repeat"):
            for item in value:
                argv += [flag, str(item)]
        elif isinstance(value, tuple):
            argv += [flag, ",".join(map(str, value))]
        else:
            argv += [flag, str(value)]
    return argv


@pytest.mark.parametrize("path", list(COMMANDS), ids=" ".join)
def test_yaml_and_flags_round_trip_every_field(path, tmp_path):
    config = _changed_config(COMMANDS[path].config)
    defaults = {f.name: f.default for f in config_fields(type(config))}
    assert all(getattr(config, k) != v for k, v in defaults.items())  # every field changed
    assert _parse(_argv(path, config)) == config
    file = tmp_path / "config.yaml"
    file.write_text(yaml.safe_dump(config_to_dict(config)))
    assert _parse([*path, "--config", str(file)]) == config
    assert load_config(type(config), file) == config


def test_flags_override_yaml(tmp_path):
    file = tmp_path / "bench.yaml"
    file.write_text("pairs: 30\nneutral: 6\njudges: [privileged, rule]\ntasks: oracle\n"
                    "state-noise: 0.02,0.04\nrefresh: true\n")
    from_file = _parse(["judge-bench", "--config", str(file)])
    assert (from_file.pairs, from_file.neutral, from_file.judges) == (30, 6, ("privileged", "rule"))
    assert from_file.tasks == ORACLE_TASKS and from_file.state_noise == (0.02, 0.04)
    assert from_file.refresh is True
    both = _parse(["judge-bench", "--config", str(file), "--pairs", "12", "--judge", "noisy",
                   "--no-refresh"])
    assert (both.pairs, both.neutral, both.judges, both.refresh) == (12, 6, ("noisy",), False)
    execute = tmp_path / "execute.yaml"
    execute.write_text("solution: OpenWindow-v0\nout: runs/a\nresume: false\n")
    assert _parse(["execute", "--config", str(execute)]) == ExecuteConfig(
        solution="OpenWindow-v0", out="runs/a", resume=False)
    assert _parse(["execute", "OpenDrawer-v0", "--config", str(execute), "--out", "runs/b",
                   "--resume"]) == ExecuteConfig(solution="OpenDrawer-v0", out="runs/b")


def test_unknown_yaml_key_names_it_and_the_valid_ones(tmp_path, capsys):
    file = tmp_path / "bench.yaml"
    file.write_text("pair: 30\n")
    assert main(["judge-bench", "--config", str(file), "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "unknown key 'pair'" in err and "did you mean 'pairs'" in err
    assert "simjudge judge-bench" in err and str(file) in err
    valid = err.split("valid keys:")[1]
    assert [k.strip() for k in valid.split(",")] == [f.name for f in config_fields(JudgeBenchConfig)]
    file.write_text("pairs: many\n")
    assert main(["judge-bench", "--config", str(file)]) == 2
    assert "pairs" in (err := capsys.readouterr().err) and "an integer" in err
    file.write_text("- pairs\n")
    assert main(["judge-bench", "--config", str(file)]) == 2
    assert "must hold a mapping" in capsys.readouterr().err
    assert main(["judge-bench", "--config", str(tmp_path / "missing.yaml")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_required_values_may_come_from_yaml_but_must_come(tmp_path, capsys):
    file = tmp_path / "acquire.yaml"
    file.write_text("task: Open Door\n")
    with pytest.raises(SystemExit):
        _parse(["acquire", "--config", str(file)])
    assert "required: --out" in capsys.readouterr().err
    assert _parse(["acquire", "--config", str(file), "--out", "o"]) == AcquireConfig(
        task="Open Door", out="o")
    with pytest.raises(ConfigError, match="missing required key"):
        config_from_dict(DatasetBuildConfig, {"out": "o"})


def test_an_undocumented_field_cannot_become_a_flag():
    @dataclass
    class Half:
        """Half documented.

        Attributes:
            seed: Seed.
        """

        seed: int = 0
        steps: int = 10

    import argparse

    with pytest.raises(ConfigError, match=r"Half\.steps is not documented"):
        add_config_arguments(argparse.ArgumentParser(), Half)


@pytest.mark.parametrize("name", ["simjudge.tasks.spec.config", "simjudge.pipelines.configs"])
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), verbose=False)
    assert result.attempted > 0 and result.failed == 0


# ----------------------------------------------------------------------------------
# every run directory records its full config
# ----------------------------------------------------------------------------------
def _recorded(folder: Path, command: str, config: Any) -> dict[str, Any]:
    data = json.loads((folder / "config.json").read_text())
    assert data["command"] == command
    expected = config_to_dict(config)
    assert {k: data[k] for k in expected} == expected
    assert "versions" in data.get("provenance", data)
    return data


def test_execute_and_demo_record_their_config(tmp_path, capsys):
    out = tmp_path / "exec"
    argv = ["execute", "OpenWindow-v0", "--out", str(out), "--reward-solver", "oracle",
            "--no-video", "--seed", "0", "--continue-on-failure"]
    assert main(argv) == 0
    data = _recorded(out, "execute", _parse(argv))
    assert data["continue_on_failure"] is True and "solution_digest" in data
    summary = json.loads((out / "summary.json").read_text())
    assert summary["config"]["command"] == "execute" and summary["config"]["video"] is False
    demo = tmp_path / "demo"
    assert main(["demo", "--out", str(demo), "--seed", "1"]) == 0
    _recorded(demo, "demo", _parse(["demo", "--out", str(demo), "--seed", "1"]))


class _ClaimEverySubtask:
    """An execute function that reports success without running.

    Picklable: the default ``local`` executor sends it to worker processes.
    """

    def __call__(self, solution, run_dir):
        from simjudge.tasks.spec import Outcome

        return Outcome((True,) * len(solution.subtasks), True, task=solution.task)


def _fake_execute_fn(*args: Any, **kwargs: Any):
    return _ClaimEverySubtask()


def test_acquire_and_dataset_record_their_config(tmp_path, monkeypatch, capsys):
    import simjudge.pipelines.components as components

    monkeypatch.setattr(components, "make_execute_fn", _fake_execute_fn)
    out = tmp_path / "acquire"
    argv = ["acquire", "--task", "Open Door", "--candidates", "1", "--no-pool",
            "--reward-solver", "mpc", "--temperature", "0.5", "--out", str(out)]
    assert main(argv) == 0
    data = _recorded(out, "acquire", _parse(argv))
    assert data["use_pool"] is False and data["temperature"] == 0.5
    # a resume must carry the same config; another config is refused with the difference
    assert main([*argv, "--resume"]) == 0
    assert main([*argv[:-2], "--temperature", "0.9", "--out", str(out), "--resume"]) == 2
    assert "temperature" in capsys.readouterr().err
    data_dir = tmp_path / "data"
    argv = ["dataset", "build", "--tasks", "Open Drawer", "--base", "1", "--completions", "1",
            "--out", str(data_dir)]
    assert main(argv) == 0
    _recorded(data_dir, "dataset build", _parse(argv))


def test_prm_and_judge_bench_record_their_config(tmp_path, monkeypatch, capsys):
    import simjudge.llm as llm
    import simjudge.pipelines.dataset as dataset
    import simjudge.pipelines.prm_eval as prm_eval

    class Embedder:
        embed = staticmethod(lambda texts: texts)

    seen = []

    def train_eval(records, embed, split, **kwargs):
        seen.append((split, kwargs["test_tasks"], kwargs["use_rule"], kwargs["config"].epochs))
        return {"split": split, "test_tasks": ["Open Door"], "train_prefixes": 1,
                "test_prefixes": 1, "prefix_accuracy": 1.0,
                "rows": [{"method": "base", "ATSR": 0.5}], "verifier": None}

    monkeypatch.setattr(dataset, "load_records", lambda folder: [])
    monkeypatch.setattr(llm, "MiniLMEmbedder", Embedder)
    monkeypatch.setattr(prm_eval, "train_eval", train_eval)
    out = tmp_path / "prm"
    argv = ["prm", "eval", "--data", str(tmp_path), "--out", str(out), "--epochs", "3",
            "--no-rule", "--test-tasks", "Open Door"]
    assert main(argv) == 0
    assert seen == [("task", ("Open Door",), False, 3), ("solution", ("Open Door",), False, 3)]
    _recorded(out, "prm eval", _parse(argv))
    bench = tmp_path / "bench"
    argv = ["judge-bench", "--tasks", "OpenDrawer-v0", "--pairs", "6", "--neutral", "0",
            "--sections", "pairs", "--ks", "1,2", "--out", str(bench)]
    assert main(argv) == 0
    _recorded(bench, "judge-bench", _parse(argv))


def test_the_acquire_pipeline_takes_the_commands_config(tmp_path, monkeypatch):
    """One convention: `acquire` is `run_acquire(AcquireConfig)`; the CLI only prints."""
    import simjudge.pipelines.components as components
    from simjudge.pipelines.acquire_run import run_acquire
    from simjudge.pipelines.configs import AcquireConfig

    monkeypatch.setattr(components, "make_execute_fn", _fake_execute_fn)
    shown = []
    config = AcquireConfig(task="Open Door", candidates=1, use_pool=False, reward_solver="mpc",
                           out=str(tmp_path / "a"))
    done = run_acquire(config, show=shown.append)
    assert done.task == "Open Door" and done.rows is None and len(done.result.executed) == 1
    assert shown and "goal" in shown[0].lower()
    recorded = json.loads((tmp_path / "a" / "config.json").read_text())
    assert recorded["command"] == "acquire" and recorded["candidates"] == 1
    for bad in (AcquireConfig(out=str(tmp_path / "b")),
                AcquireConfig(task="Open Door", propose_tasks=2, out=str(tmp_path / "c")),
                AcquireConfig(propose_tasks=2, out=str(tmp_path / "d"))):
        with pytest.raises(ValueError, match="--task|--object"):
            run_acquire(bad)
    assert not any((tmp_path / n).exists() for n in "bcd")


def test_the_execute_pipeline_takes_the_commands_config(tmp_path):
    """One convention: `execute` is `run_execute(ExecuteConfig)`; the CLI only prints."""
    from simjudge.pipelines.configs import ExecuteConfig
    from simjudge.pipelines.execute_run import run_execute

    shown = []
    out = tmp_path / "run"
    summary = run_execute(ExecuteConfig(solution="OpenDrawer-v0", reward_solver="oracle",
                                        video=False, out=str(out)), show=shown.append)
    assert summary.task_success and shown and "goal" in shown[0].lower()
    recorded = json.loads((out / "config.json").read_text())
    assert recorded["command"] == "execute" and recorded["solution"] == "OpenDrawer-v0"
    assert "goal" in json.loads((out / "summary.json").read_text())
    with pytest.raises(FileNotFoundError):
        run_execute(ExecuteConfig(solution=str(tmp_path / "missing.yaml"), out=str(tmp_path / "x")))
