"""Bad input never gets a traceback: every case of issue 16's list, through ``main(argv)``.

Each case checks the exit status (2: bad input), that no traceback is printed, and that
the message names the problem, the file (when there is one) and the fix. All of them are
refused before any work starts, except the truncated run-dir file, which is found while
resuming a real run.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from simjudge.cli import main

BAD_YAML = "task: Open Drawer\nscene: [\n  objects: {\n"


def run(capsys, *argv: str) -> tuple[int, str]:
    """Exit status and stderr of ``simjudge ARGV``; asserts no traceback was printed."""
    code = main(list(argv))
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    return code, err


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    bad = tmp_path / "bad.yaml"
    bad.write_text(BAD_YAML)
    latin = tmp_path / "latin.yaml"
    latin.write_bytes("task: Öffne die Schublade\n".encode("latin-1"))
    a_file = tmp_path / "a_file"
    a_file.write_text("not a folder")
    return {"bad": bad, "latin": latin, "file": a_file, "root": tmp_path}


def test_yaml_syntax_error_names_the_file_line_and_fix(capsys, files):
    code, err = run(capsys, "execute", str(files["bad"]), "--out", str(files["root"] / "r"))
    assert code == 2
    assert f"{files['bad']} is not valid YAML at line 4, column 1" in err
    assert "fix the syntax" in err and f"file: {files['bad']}" in err


def test_yaml_syntax_error_in_a_config_file(capsys, files):
    code, err = run(capsys, "acquire", "--config", str(files["bad"]),
                    "--out", str(files["root"] / "r"))
    assert code == 2 and "--config" in err and "is not valid YAML at line 4" in err


@pytest.mark.parametrize("how", ["solution", "config"])
def test_non_utf8_yaml_names_the_file_and_the_fix(capsys, files, how):
    out = str(files["root"] / "r")
    argv = (["execute", str(files["latin"]), "--out", out] if how == "solution" else
            ["acquire", "--config", str(files["latin"]), "--out", out])
    code, err = run(capsys, *argv)
    assert code == 2
    assert f"{files['latin']} is not UTF-8 text" in err and "save it as UTF-8" in err


@pytest.mark.parametrize("command", [
    ["execute", "OpenDrawer-v0", "--reward-solver", "oracle"],
    ["acquire", "--task", "Open Drawer", "--no-pool"],
    ["dataset", "build", "--tasks", "Open Drawer"],
])
def test_out_that_is_a_file(capsys, files, command):
    code, err = run(capsys, *command, "--out", str(files["file"]))
    assert code == 2
    assert f"--out {files['file']} is a file, not a folder" in err and "give a folder" in err


def test_out_under_a_file(capsys, files):
    code, err = run(capsys, "acquire", "--task", "Open Drawer", "--no-pool",
                    "--out", str(files["file"] / "run"))
    assert code == 2 and "which is a file, not a folder" in err


def test_out_in_a_folder_nobody_may_write(capsys):
    # /proc/1 refuses new files even to root (a chmod 555 folder would not stop root)
    code, err = run(capsys, "acquire", "--task", "Open Drawer", "--no-pool",
                    "--out", "/proc/1/simjudge-run")
    assert code == 2 and "not writable" in err and "choose a folder you can write to" in err


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_read_only_run_dir(capsys, tmp_path):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    run_dir.chmod(0o555)
    try:
        code, err = run(capsys, "execute", "OpenDrawer-v0", "--out", str(run_dir))
    finally:
        run_dir.chmod(0o755)
    assert code == 2 and "is not writable" in err


def test_file_where_a_file_path_is_needed(capsys, tmp_path):
    code, err = run(capsys, "render", "OpenDrawer-v0", "--out", str(tmp_path))
    assert code == 2 and "is a folder; give a file path" in err
    code, err = run(capsys, "pool", "list", "--pool", str(tmp_path))
    assert code == 2 and "--pool" in err and "is a folder" in err


@pytest.mark.parametrize(("argv", "message"), [
    (["acquire", "--candidates", "0"], "--candidates must be at least 1, got 0"),
    (["acquire", "--candidates", "-1"], "--candidates must be at least 1, got -1"),
    (["acquire", "--top-k", "-1"], "--top-k must be at least 0, got -1"),
    (["acquire", "--repair-rounds", "-2"], "--repair-rounds must be at least 0"),
    (["acquire", "--workers", "0"], "--workers must be at least 1"),
    (["acquire", "--seed", "-5"], "--seed must be at least 0"),
    (["acquire", "--temperature", "nan"], "--temperature must be a finite number"),
    (["acquire", "--max-tokens", "0"], "--max-tokens must be at least 1"),
])
def test_counts_are_checked_up_front(capsys, tmp_path, argv, message):
    out = tmp_path / "r"
    code, err = run(capsys, *argv, "--task", "Open Drawer", "--no-pool", "--out", str(out))
    assert code == 2 and message in err and "pass --" in err or "finite" in err
    assert not out.exists(), "refused before any work: no run directory"


def test_other_commands_check_their_counts(capsys, tmp_path):
    code, err = run(capsys, "dataset", "build", "--tasks", "Open Drawer", "--base", "0",
                    "--out", str(tmp_path / "d"))
    assert code == 2 and "--base must be at least 1" in err
    code, err = run(capsys, "pool", "search", "drawer", "-k", "0", "--pool",
                    str(tmp_path / "p.sqlite"))
    assert code == 2 and "-k must be at least 1" in err or "--k must be at least 1" in err
    code, err = run(capsys, "execute", "OpenDrawer-v0", "--n-envs", "0", "--out",
                    str(tmp_path / "e"))
    assert code == 2 and "--n-envs must be at least 1" in err


def test_huge_task_name_and_description_are_refused(capsys, tmp_path):
    out = str(tmp_path / "r")
    code, err = run(capsys, "acquire", "--task", "x" * 100_000, "--no-pool", "--out", out)
    assert code == 2 and "--task is 100000 characters long; at most 200" in err
    assert len(err) < 1000, "the name itself is not echoed"
    code, err = run(capsys, "acquire", "--task", "Open Drawer", "--description", "y" * 5000,
                    "--no-pool", "--out", out)
    assert code == 2 and "--description is 5000 characters long; at most 2000" in err
    code, err = run(capsys, "acquire", "--task", "Open\nDrawer", "--no-pool", "--out", out)
    assert code == 2 and "must be one line" in err
    code, err = run(capsys, "goal", " ")
    assert code == 2 and "--task is empty" in err


def test_tasks_from_file_is_checked(capsys, files):
    code, err = run(capsys, "acquire", "--tasks-from", str(files["bad"]), "--no-pool",
                    "--out", str(files["root"] / "r"))
    assert code == 2 and "--tasks-from" in err and "is not valid YAML" in err
    code, err = run(capsys, "acquire", "--tasks-from", str(files["root"] / "missing.yaml"),
                    "--no-pool", "--out", str(files["root"] / "r"))
    assert code == 2 and "does not exist" in err


def test_truncated_run_dir_json_names_the_file_and_the_fix(capsys, tmp_path):
    out = tmp_path / "run"
    assert main(["execute", "OpenDrawer-v0", "--out", str(out), "--reward-solver", "oracle",
                 "--no-video"]) == 0
    verdict = out / "subtasks" / "00" / "verdict.json"
    verdict.write_text(verdict.read_text()[:40])
    capsys.readouterr()
    code, err = run(capsys, "execute", "OpenDrawer-v0", "--out", str(out), "--reward-solver",
                    "oracle", "--no-video")
    assert code == 2
    assert f"{verdict} is not valid JSON" in err and "it may be truncated" in err
    assert f"file: {verdict}" in err and f"fix: delete {verdict}" in err


def test_debug_shows_the_traceback(capsys, files):
    code = main(["execute", str(files["bad"]), "--out", str(files["root"] / "r"), "--debug"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback (most recent call last)" in err
    assert "simjudge: error:" in err


def test_unexpected_errors_are_reported_as_bugs():
    import io

    from simjudge.cli_errors import describe_error, report_error

    assert describe_error(TypeError("boom")).bug
    stream = io.StringIO()
    assert report_error(PermissionError(13, "Permission denied", "/x/run"), stream=stream) == 2
    assert "no permission" in stream.getvalue() and "file: /x/run" in stream.getvalue()
    stream = io.StringIO()
    assert report_error(KeyError("k"), stream=stream) == 2
    assert report_error(TypeError("boom"), stream=io.StringIO()) == 70


def test_console_script_exit_status_and_output():
    """The installed entry point (a real subprocess) prints no traceback either."""
    done = subprocess.run([sys.executable, "-m", "simjudge.cli", "acquire", "--task",
                           "Open Drawer", "--candidates", "0", "--out", "/tmp/unused"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "--candidates must be at least 1, got 0" in done.stderr


# ------------------------------------------------- issue 39 part 5: validate before work

AUDIT = ["audit", "--policy", "r=random", "--tasks", "OpenDrawer-v0"]
ARENA = ["arena", "run", "--policy", "a=random", "--policy", "b=zero", "--tasks", "OpenDrawer-v0"]


@pytest.mark.parametrize(("argv", "message"), [
    ([*AUDIT, "--horizon", "-3"], "--horizon must be at least 1, got -3"),
    ([*AUDIT, "--horizon", "0"], "--horizon must be at least 1, got 0"),
    ([*AUDIT, "--seeds", "0"], "--seeds must be at least 1, got 0"),
    (["judge-bench", "--pairs", "-4"], "--pairs must be at least 1, got -4"),
    ([*ARENA, "--matches", "-1"], "--matches must be at least 1, got -1"),
    ([*ARENA, "--horizon", "-3"], "--horizon must be at least 1"),
    ([*AUDIT, "--judge", "privilegd"], "--judge privilegd: unknown judge 'privilegd'"),
    (["judge-bench", "--judge", "noisyy"], "Did you mean 'noisy'?"),
    ([*AUDIT, "--policy", "x=randm"], "--policy x=randm: unknown policy 'randm'"),
    ([*ARENA, "--policy", "c=oracle-nosy"], "Did you mean 'oracle-noisy'?"),
    ([*AUDIT, "--max-frame-mb", "0"], "--max-frame-mb must be in (0, 4096] MiB"),
    ([*AUDIT, "--policy", "x=remote:ws://127.0.0.1:9?timeout=-1&api_key=k3y"],
     "remote policy ?timeout= is out of range"),
    ([*AUDIT, "--policy", "x=remote:http://127.0.0.1:9"], "must look like remote:ws://HOST:PORT"),
])
def test_run_arguments_are_refused_before_any_work(capsys, tmp_path, argv, message):
    out = tmp_path / "run"
    start = time.monotonic()
    code, err = run(capsys, *argv, "--out", str(out))
    seconds = time.monotonic() - start
    assert code == 2 and message in err, err
    assert len(err.strip().splitlines()) == 1, err  # one line
    assert seconds < 1.0, f"{seconds:.1f} s: checked only after work started"
    assert not out.exists(), "refused before any work: no run directory"


@pytest.mark.parametrize(("argv", "message"), [
    (["serve", "random", "--port", "99999"], "--port must be in 1..65535, got 99999"),
    (["serve", "random", "--port", "0"], "--port must be at least 1, got 0"),
    (["serve", "randm"], "POLICY randm: unknown policy 'randm'"),
    (["serve", "random", "--host", "0.0.0.0"], "give --api-key KEY (clients send it), or --insecure"),
    (["serve", "random", "--max-frame-mb", "-1"], "--max-frame-mb must be in (0, 4096] MiB"),
])
def test_serve_arguments_are_refused_before_serving(capsys, argv, message):
    start = time.monotonic()
    code = main(argv)
    captured = capsys.readouterr()
    assert code == 2 and message in captured.err, captured.err
    assert "serving" not in captured.out and "Traceback" not in captured.err
    assert len(captured.err.strip().splitlines()) == 1
    assert time.monotonic() - start < 1.0


@pytest.mark.parametrize("command", [AUDIT, ARENA, ["judge-bench"]])
def test_out_that_holds_the_users_files_is_refused(capsys, tmp_path, command):
    folder = tmp_path / "papers"
    folder.mkdir()
    (folder / "thesis.tex").write_text("mine")
    code, err = run(capsys, *command, "--out", str(folder))
    assert code == 2 and f"--out {folder} is a folder with 1 other entry (thesis.tex)" in err
    assert "no config.json" in err and "give a new or empty folder" in err
    assert len(err.strip().splitlines()) == 1, err
    assert sorted(p.name for p in folder.iterdir()) == ["thesis.tex"]  # nothing written beside


def test_out_that_is_an_empty_folder_or_a_run_is_accepted(capsys, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    argv = [*AUDIT, "--seeds", "1", "--horizon", "3", "--epsilon", "0.01", "--videos", "0",
            "--executor", "serial", "--no-report"]
    assert main([*argv, "--out", str(empty)]) == 0
    assert main([*argv, "--out", str(empty), "--resume"]) == 0  # a run now: resumable
    capsys.readouterr()
