"""The console script's light command table agrees with the command tree, and stays light.

Why: ``simjudge --help`` used to import every command's config (the arena and judge stacks)
before printing, 1.4 s of CPU; the table lets it import only what the chosen command needs.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from simjudge import cli, cli_table

ROOT = Path(__file__).resolve().parent.parent


def test_the_table_is_the_command_tree():
    text = Path(cli_table.__file__).read_text()
    start = text.index("COMMAND_TABLE: dict")
    end = text.index("# --- end of generated part")
    assert text[start:end] == cli_table.render_table(), (
        "simjudge/cli_table.py is out of date: run `python -m simjudge.cli_table`")
    assert list(cli_table.COMMAND_TABLE) == list(cli.COMMANDS)
    assert cli_table.GROUP_TABLE == cli.GROUPS


def test_help_imports_no_command_module():
    code = ("import sys\nfrom simjudge.cli import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "heavy = sorted(m for m in sys.modules if m.startswith(('simjudge.pipelines', "
            "'simjudge.judges', 'simjudge.policies', 'simjudge.cli_core', 'pydantic', 'torch')))\n"
            "print('HEAVY', heavy)\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          timeout=60)
    assert "HEAVY []" in done.stdout, done.stdout[-2000:] + done.stderr[-2000:]
    assert "arena" in done.stdout and "audit" in done.stdout  # the commands are listed


@pytest.mark.parametrize(("argv", "path"), [
    (["arena", "run", "--matches", "3"], ("arena", "run")),
    (["goal", "Open Drawer", "--json"], ("goal",)),
    (["pool", "search", "q"], ("pool", "search")),
    (["--debug"], None),
    (["nonsense"], None),
])
def test_the_command_is_found_from_the_leading_words(argv, path):
    assert cli.command_path(argv) == path


def test_an_unknown_command_lists_the_commands(capsys):
    with pytest.raises(SystemExit) as stop:
        cli.main(["arna"])
    assert stop.value.code == 2
    assert "invalid choice: 'arna'" in capsys.readouterr().err
