"""What the command line prints when a command fails: the error, the file, the fix.

:func:`report_error` is the top-level handler of :func:`simjudge.cli.main`: no traceback
reaches the user (``--debug``, or ``SIMJUDGE_DEBUG=1``, prints it as well). simjudge's own
errors (:class:`~simjudge.envs.errors.SimjudgeError`) already say what to do; the usual
failures of reading and writing files (missing, a file where a folder should be, no
permission, a full disk, YAML syntax, not UTF-8, truncated JSON) get their file and fix
here; anything else is reported as a simjudge bug.

Example:
    >>> import io
    >>> out = io.StringIO()
    >>> report_error(IsADirectoryError(21, "Is a directory", "runs/x"), stream=out)
    2
    >>> print(out.getvalue().strip())
    simjudge: error: runs/x is a folder where a file is needed
      file: runs/x
      fix: give the path of a file, not a folder
"""

from __future__ import annotations

import errno
import json
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from simjudge.envs.errors import SimjudgeError
from simjudge.tasks.spec.io import CorruptFileError

__all__ = ["ErrorReport", "describe_error", "report_error"]

BAD_INPUT_EXIT = 2
"""Exit status of a command stopped by bad input (argparse uses 2 for usage errors too)."""
BUG_EXIT = 70
"""Exit status of an unexpected error (``EX_SOFTWARE``)."""
_PATH_LOCALS = ("path", "source", "file", "filename", "config_path", "yaml_path")


@dataclass(frozen=True)
class ErrorReport:
    """What is printed about an error.

    Attributes:
        problem: What went wrong, in a sentence.
        file: The file or folder involved, if known.
        fix: What to do, if not already in ``problem``.
        bug: Whether it is unexpected (a simjudge bug) rather than bad input.
    """

    problem: str
    file: str | None = None
    fix: str | None = None
    bug: bool = False


def _file_in_traceback(exc: BaseException) -> str | None:
    """The innermost path-like local (``path``, ``source`` ...) that names an existing file."""
    tb = exc.__traceback__
    frames = []
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    for frame in reversed(frames):
        for name in _PATH_LOCALS:
            value = frame.f_locals.get(name)
            if isinstance(value, Path | str) and 0 < len(str(value)) < 4096 \
                    and "\n" not in str(value):
                try:
                    if Path(value).is_file():
                        return str(value)
                except OSError:
                    continue
    return None


def _os_error(exc: OSError) -> ErrorReport:
    name = exc.filename if exc.filename is not None else None
    file = str(name) if name is not None else None
    where = file or "a file"
    code = exc.errno
    if isinstance(exc, FileExistsError) or code == errno.ENOTDIR:
        return ErrorReport(f"{where} (or a folder above it) is a file where a folder is needed",
                           file, "give a folder path (e.g. --out runs/x), or remove the file")
    if isinstance(exc, IsADirectoryError):
        return ErrorReport(f"{where} is a folder where a file is needed", file,
                           "give the path of a file, not a folder")
    if isinstance(exc, FileNotFoundError):
        return ErrorReport(f"{where} does not exist", file, "check the path")
    if isinstance(exc, PermissionError) or code in (errno.EROFS, errno.EACCES):
        return ErrorReport(f"no permission to write or read {where} ({exc.strerror})", file,
                           "choose a folder you can write to (--out), or change its "
                           "permissions")
    if code in (errno.ENOSPC, errno.EDQUOT):
        return ErrorReport(f"the disk is full while writing {where}", file,
                           "free some space, then rerun with --resume: finished work is kept")
    return ErrorReport(f"cannot use {where}: {exc.strerror or exc}", file,
                       "check the path and its permissions")


def describe_error(exc: BaseException) -> ErrorReport:
    """The problem, file and fix of an exception that stopped a command."""
    import yaml

    if isinstance(exc, CorruptFileError):
        return ErrorReport(f"{exc.path} {exc.problem}", str(exc.path), exc.fix)
    if isinstance(exc, SimjudgeError):
        path = getattr(exc, "path", None)
        return ErrorReport(str(exc), None if path is None else str(path))
    if isinstance(exc, OSError):
        return _os_error(exc)
    file = _file_in_traceback(exc)
    if isinstance(exc, yaml.YAMLError):
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        return ErrorReport(f"{file or 'a YAML file'} is not valid YAML{where}: {problem}", file,
                           "fix the YAML syntax (indentation, a missing ':', an unclosed "
                           "bracket or quote)")
    if isinstance(exc, UnicodeDecodeError):
        return ErrorReport(f"{file or 'an input file'} is not UTF-8 text (byte {exc.start}: "
                           f"{exc.reason})", file, "save the file as UTF-8")
    if isinstance(exc, json.JSONDecodeError):
        return ErrorReport(f"{file or 'a JSON file'} is not valid JSON ({exc.msg}: line "
                           f"{exc.lineno}, column {exc.colno}); it may be truncated", file,
                           "delete it to have the step that wrote it redone (rerun with "
                           "--resume), or fix it")
    if isinstance(exc, MemoryError | RecursionError):
        what = "memory" if isinstance(exc, MemoryError) else "stack"
        return ErrorReport(f"the command ran out of {what} ({type(exc).__name__})", file,
                           "make the input smaller (fewer candidates, a shorter solution)",
                           bug=True)
    if isinstance(exc, ValueError | LookupError):
        return ErrorReport(f"{exc}", file)
    return ErrorReport(f"unexpected {type(exc).__name__}: {exc}", file,
                       "this is a simjudge bug: rerun with --debug and report the traceback",
                       bug=True)


def report_error(exc: BaseException, *, debug: bool = False, stream: TextIO | None = None) -> int:
    """Print an error (and with ``debug`` its traceback); return the exit status.

    Returns:
        :data:`BAD_INPUT_EXIT` for bad input, :data:`BUG_EXIT` for an unexpected error.
    """
    out = stream if stream is not None else sys.stderr
    if debug:
        traceback.print_exception(type(exc), exc, exc.__traceback__, file=out)
    report = describe_error(exc)
    lines = [f"simjudge: error: {report.problem}"]
    if report.file:
        lines.append(f"  file: {report.file}")
    if report.fix and report.fix not in report.problem:
        lines.append(f"  fix: {report.fix}")
    if report.bug and not debug:
        lines.append("  (rerun with --debug for the traceback)")
    print("\n".join(lines), file=out)
    return BUG_EXIT if report.bug else BAD_INPUT_EXIT
