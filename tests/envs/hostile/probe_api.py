"""State API functions that report on the process they run in (the worker, in subprocess mode).

In subprocess mode the state API functions are imported and called in the worker, so these
tell a test what the worker's limits, descriptors and system-call filter are.
"""

from __future__ import annotations

import errno
import os
import resource

__all__ = ["PROBE_API", "fork_errno", "open_fds", "rlimit_fsize"]


def rlimit_fsize(view: object) -> float:
    """The worker's soft ``RLIMIT_FSIZE`` (bytes; -1 for unlimited)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_FSIZE)
    return float(soft)


def open_fds(view: object) -> tuple[str, ...]:
    """What each open descriptor of the worker points to (``/proc/self/fd``)."""
    fds = []
    for name in sorted(os.listdir("/proc/self/fd"), key=int):
        try:
            fds.append(f"{name}:{os.readlink(f'/proc/self/fd/{name}')}")
        except OSError:
            fds.append(f"{name}:gone")  # the descriptor listdir itself used
    return tuple(fds)


def fork_errno(view: object) -> float:
    """0 if the worker could fork (the child exits at once), else the errno it got."""
    try:
        pid = os.fork()
    except OSError as exc:
        return float(exc.errno or errno.EPERM)
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    return 0.0


PROBE_API = {f.__name__: f for f in (rlimit_fsize, open_fds, fork_errno)}
