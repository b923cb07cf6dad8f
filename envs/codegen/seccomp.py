"""An optional seccomp filter for the worker process, through libseccomp and ctypes.

Where ``libseccomp.so.2`` can be loaded (no Python binding is needed), the worker installs
a filter that lets every system call through except those a reward never needs and an
escape would: starting programs, new processes or threads, sockets, tracing, mounts and
namespaces, loading kernel modules, changing identities. They fail with ``EPERM``.
Where the library or the kernel feature is missing, :func:`install_filter` says so and
the worker runs on with its resource limits (recorded in ``SandboxWorker.isolation``).
"""

from __future__ import annotations

import ctypes
import ctypes.util

__all__ = ["DENIED_SYSCALLS", "install_filter"]

# fmt: off
DENIED_SYSCALLS: tuple[str, ...] = (
    "execve", "execveat", "fork", "vfork", "clone", "clone3", "socket", "socketpair",
    "connect", "bind", "listen", "accept", "accept4", "ptrace", "process_vm_readv",
    "process_vm_writev", "mount", "umount2", "unshare", "setns", "pivot_root", "chroot",
    "init_module", "finit_module", "delete_module", "kexec_load", "setuid", "setgid",
    "setreuid", "setregid", "setresuid", "setresgid", "bpf", "perf_event_open", "keyctl",
    "add_key", "request_key", "userfaultfd", "io_uring_setup",
)
# fmt: on
"""System calls that fail with ``EPERM`` in the worker."""

_ACT_ALLOW = 0x7FFF0000
_ACT_ERRNO_EPERM = 0x00050000 | 1


def install_filter() -> str:
    """Install the filter on this process; return ``"installed (N calls denied)"`` or why not."""
    name = ctypes.util.find_library("seccomp") or "libseccomp.so.2"
    try:
        lib = ctypes.CDLL(name, use_errno=True)
    except OSError as exc:
        return f"not installed: libseccomp is not available ({exc})"
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_rule_add.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int,
                                     ctypes.c_uint]
    lib.seccomp_load.argtypes = [ctypes.c_void_p]
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    ctx = lib.seccomp_init(_ACT_ALLOW)
    if not ctx:
        return "not installed: seccomp_init failed"
    try:
        denied = 0
        for call in DENIED_SYSCALLS:
            number = lib.seccomp_syscall_resolve_name(call.encode())
            if number < 0:
                continue  # not a system call on this architecture
            if lib.seccomp_rule_add(ctx, _ACT_ERRNO_EPERM, number, 0) != 0:
                return f"not installed: the rule for {call} was refused"
            denied += 1
        result = lib.seccomp_load(ctx)
        if result != 0:
            return f"not installed: seccomp_load failed ({result})"
        return f"installed ({denied} calls denied)"
    finally:
        lib.seccomp_release(ctx)
