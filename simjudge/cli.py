"""The ``simjudge`` command line: one typed config per command, a thin call into the library.

Every command's options are a config dataclass; the parser is generated from them
(:mod:`simjudge.cli_configs`), so flags, defaults and help are written once, and every command
takes ``--config FILE.yaml`` too. The command tree is :data:`simjudge.cli_core.COMMANDS`; the
console script reads the light :mod:`simjudge.cli_table` first and imports only the module of
the command it runs, so ``simjudge --help`` costs about what ``import gymnasium`` does
(``bench/startup.py``).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from simjudge.cli_table import COMMAND_TABLE, GROUP_TABLE, add_command_tree

if TYPE_CHECKING:
    from simjudge.cli_core import COMMANDS, GROUPS

__all__ = ["COMMANDS", "GROUPS", "build_parser", "main"]

DESCRIPTION = ("Generate, execute and judge robot manipulation skills in simulation. "
               "Every command also takes --config FILE.yaml (flags override it).")
BACKENDS = ("pybullet", "mujoco", "sapien")


def __getattr__(name: str) -> Any:
    if name in ("COMMANDS", "GROUPS"):  # the whole tree: imports every command's config
        return getattr(importlib.import_module("simjudge.cli_core"), name)
    raise AttributeError(f"module 'simjudge.cli' has no attribute {name!r}")


def _add_globals(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("--debug", action="store_true", help="on an error, print the "
                        "traceback too (also accepted after the command; or SIMJUDGE_DEBUG=1)")
    parser.add_argument("--backend", choices=BACKENDS, help="physics "
                        "backend of every env the command builds (also accepted after the "
                        "command; or SIMJUDGE_BACKEND=NAME); default pybullet")
    return parser


def build_parser() -> argparse.ArgumentParser:
    """The whole argument parser, generated from :data:`COMMANDS` (for documentation and tests)."""
    from simjudge.cli_configs import build_command_parser
    from simjudge.cli_core import COMMANDS, GROUPS

    return _add_globals(build_command_parser("simjudge", DESCRIPTION, COMMANDS, GROUPS))


def command_path(words: Sequence[str]) -> tuple[str, ...] | None:
    """The command that the leading words of ``words`` name (the longest match), else None.

    >>> command_path(["arena", "run", "--matches", "4"])
    ('arena', 'run')
    >>> command_path(["arena"]) is None
    True
    """
    lead: list[str] = []
    for word in words:
        if word.startswith("-"):
            break
        lead.append(word)
    for n in range(len(lead), 0, -1):
        if tuple(lead[:n]) in COMMAND_TABLE:
            return tuple(lead[:n])
    return None


def _summary_parser() -> argparse.ArgumentParser:
    """The command tree from the table alone: help, groups and "invalid choice" errors."""
    parser = argparse.ArgumentParser(prog="simjudge", description=DESCRIPTION)
    add_command_tree(parser, ((path, summary, summary)
                              for path, (_, _, summary) in COMMAND_TABLE.items()), GROUP_TABLE)
    return _add_globals(parser)


def _parser_for(path: tuple[str, ...] | None) -> argparse.ArgumentParser:
    if path is None:
        return _summary_parser()
    from simjudge.cli_configs import build_command_parser

    module, name, _ = COMMAND_TABLE[path]
    command = getattr(importlib.import_module(module), name)[path]
    return _add_globals(build_command_parser("simjudge", DESCRIPTION, {path: command}, GROUP_TABLE))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``simjudge`` console script.

    Arguments are checked before any work starts (:mod:`simjudge.tasks.spec.config_checks`:
    counts, text sizes, output folders, input files; :mod:`simjudge.cli_checks`: judge and
    policy names). Whatever stops a command is printed
    as the error, the file and the fix (:func:`simjudge.cli_errors.report_error`), never
    as a traceback unless ``--debug`` is given; the exit status is 2 for bad input.
    """
    import os

    words = list(sys.argv[1:] if argv is None else argv)
    if "--backend" in words:  # global: every env any command builds uses it (default_backend)
        at = words.index("--backend")
        os.environ["SIMJUDGE_BACKEND"] = words[at + 1] if at + 1 < len(words) else ""
        del words[at:at + 2]
    debug = "--debug" in words or os.environ.get("SIMJUDGE_DEBUG", "") not in ("", "0")
    words = [w for w in words if w != "--debug"]
    args = _parser_for(command_path(words)).parse_args(words)

    from simjudge.cli_checks import check_names
    from simjudge.cli_configs import CONFIG_DEST, config_from_args
    from simjudge.cli_errors import report_error
    from simjudge.tasks.spec.config_checks import check_input_file, check_paths, check_values

    try:
        config_file = getattr(args, CONFIG_DEST, None)
        if config_file:
            check_input_file(str(config_file), "--config")
        config = config_from_args(args)
        check_values(config)
        check_names(config)  # judge and policy names, with "did you mean"
        check_paths(config)
        return int(args._handler(config))
    except KeyboardInterrupt:
        print("simjudge: interrupted; finished work is saved (rerun with --resume to continue "
              "a run)", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - the top-level handler: error, file and fix
        return report_error(exc, debug=debug)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
