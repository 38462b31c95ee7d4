"""The syscall filter of every sandboxed bot: a seccomp program built with libseccomp, handed to bwrap (``--seccomp``).

The filter allows every system call but those in :data:`DENIED`: what a bot has no use for, and what would open a
channel between two sandboxes (one bot's two processes of a duplicate pair, or two contestants) or a way out of
the sandbox. Each denied call fails with an error number the bot can see (``EPERM``, or ``ENOSYS`` where a runtime
falls back on "not implemented": ``clone3``, ``io_uring``), never with a kill the bot could not explain. System
calls of another architecture (32-bit ``int 0x80`` on x86-64) fail with ``ENOSYS``.

The list follows Flatpak's filter and Docker's default profile, plus the channels a contest must close: keyrings
(which outlive a process and are per user), file locks and leases (a lock on a file both sandboxes can read needs
no write access), and file-change notification (an inotify watch on a shared file sees the other sandbox read it).
:data:`DENIED` says why for each entry; SECURITY.md lists them.

The program is built once per referee process (a few milliseconds) and its bytes are reused for every bot. The
environment variable :data:`SWITCH_VAR` set to ``off`` leaves the filter out (a diagnostic for the hostile battery's
controls; the replay header records it).
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass
from functools import cache

SWITCH_VAR = "KOIKOI_REFEREE_SECCOMP"
"""``off`` runs bots without the syscall filter (a diagnostic; recorded in the replay header)."""


@dataclass(frozen=True)
class Rule:
    """One denied system call: ``name``, the error number it fails with, why, and optionally a condition on one
    argument (``arg``: its index, ``op``: ``eq``, ``masked`` or ``gt``, ``value``)."""

    name: str
    err: int
    why: str
    arg: int | None = None
    op: str = "eq"
    value: int = 0
    lock: bool = False  # a file lock: allowed in a package's build step (build tools lock their caches)


_NS_FLAGS = {
    "CLONE_NEWNS": 0x00020000, "CLONE_NEWCGROUP": 0x02000000, "CLONE_NEWUTS": 0x04000000,
    "CLONE_NEWIPC": 0x08000000, "CLONE_NEWUSER": 0x10000000, "CLONE_NEWPID": 0x20000000,
    "CLONE_NEWNET": 0x40000000, "CLONE_NEWTIME": 0x00000080,
}  # fmt: skip
_LOCK_COMMANDS = {
    "F_GETLK": 5, "F_SETLK": 6, "F_SETLKW": 7, "F_OFD_GETLK": 36, "F_OFD_SETLK": 37, "F_OFD_SETLKW": 38,
    "F_SETLEASE": 1024, "F_GETLEASE": 1025, "F_NOTIFY": 1026,
}  # fmt: skip
_TTY_IOCTLS = {"TIOCSTI": 0x5412, "TIOCLINUX": 0x541C}

_CHANNEL = "a channel between sandboxes"
_ESCAPE = "a way out of the sandbox or into the kernel"

DENIED: tuple[Rule, ...] = (
    # Channels: state one sandbox leaves and another reads.
    *(Rule(n, errno.EPERM, f"keyrings: kept per user after the process exits, {_CHANNEL}")
      for n in ("add_key", "keyctl", "request_key")),
    Rule("flock", errno.EPERM, f"file locks on a file both sandboxes see: {_CHANNEL}", lock=True),
    *(Rule("fcntl", errno.EPERM, f"{cmd}: record locks, leases and directory notification, {_CHANNEL}", 1, "eq", v,
           lock=True)
      for cmd, v in _LOCK_COMMANDS.items()),
    *(Rule(n, errno.EPERM, f"file-change notification sees another sandbox open a shared file: {_CHANNEL}")
      for n in ("inotify_init", "inotify_init1", "inotify_add_watch", "fanotify_init", "fanotify_mark")),
    # The page cache of files every sandbox sees: what one bot read stays cached after it (until the referee
    # drops what its group brought in, see cgroups.BotCgroup.drop_cache); these would ask or clear it exactly.
    Rule("cachestat", errno.EPERM, f"which pages of a file are cached: {_CHANNEL}"),
    Rule("fadvise64", errno.EPERM, f"POSIX_FADV_DONTNEED drops a shared file's pages from the cache: {_CHANNEL}",
         3, "eq", 4),
    *(Rule("madvise", errno.EPERM, f"{name} evicts a mapped file's pages: {_CHANNEL}", 2, "eq", v)
      for name, v in (("MADV_COLD", 20), ("MADV_PAGEOUT", 21))),
    *(Rule(n, errno.EOPNOTSUPP, f"RWF_NOWAIT tells whether a file's page is cached: {_CHANNEL}", 5, "masked", 0x8)
      for n in ("preadv2", "pwritev2")),
    # Reading or driving other processes.
    *(Rule(n, errno.EPERM, "tracing or reading other processes")
      for n in ("ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd", "process_madvise")),
    # Kernel attack surface a bot has no use for.
    Rule("perf_event_open", errno.EPERM, f"performance counters: {_CHANNEL} (cache and timing) and kernel surface"),
    Rule("bpf", errno.EPERM, _ESCAPE),
    Rule("userfaultfd", errno.EPERM, "stalls the kernel on a page fault (exploit aid)"),
    *(Rule(n, errno.ENOSYS, "io_uring: kernel surface outside the syscall filter (runtimes fall back)")
      for n in ("io_uring_setup", "io_uring_enter", "io_uring_register")),
    Rule("io_setup", errno.ENOSYS, "kernel AIO contexts: a machine-wide count (/proc/sys/fs/aio-nr) that a bot "
         "sets exactly and another reads, and a shared pool one bot can empty (glibc's POSIX AIO uses threads)"),
    # Namespaces, mounts and the root: the sandbox's own walls.
    *(Rule(n, errno.EPERM, f"namespaces and mounts: {_ESCAPE}")
      for n in ("mount", "umount2", "pivot_root", "chroot", "unshare", "setns", "open_tree", "move_mount",
                "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr", "name_to_handle_at",
                "open_by_handle_at")),
    *(Rule("clone", errno.EPERM, f"{flag}: a new namespace, {_ESCAPE}", 0, "masked", v)
      for flag, v in _NS_FLAGS.items()),
    Rule("clone3", errno.ENOSYS, "its flags cannot be checked (C libraries fall back on clone)"),
    # The machine itself.
    *(Rule(n, errno.EPERM, f"the kernel and the machine: {_ESCAPE}")
      for n in ("kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
                "create_module", "query_module", "get_kernel_syms", "reboot", "swapon", "swapoff", "syslog",
                "acct", "quotactl", "settimeofday", "clock_settime", "clock_adjtime", "iopl", "ioperm",
                "uselib", "ustat", "sysfs", "_sysctl", "nfsservctl", "lookup_dcookie", "vhangup")),
    *(Rule(n, errno.EPERM, "memory placement across NUMA nodes: other processes' memory")
      for n in ("mbind", "set_mempolicy", "get_mempolicy", "migrate_pages", "move_pages")),
    Rule("personality", errno.EPERM, "execution domains beyond Linux's (ASLR off, READ_IMPLIES_EXEC)", 0, "gt",
         0x20008),
    *(Rule("ioctl", errno.EPERM, f"{name}: typing into or driving a terminal", 1, "eq", v)
      for name, v in _TTY_IOCTLS.items()),
)  # fmt: skip
"""Every system call the filter denies, with its error number and why."""


class FilterUnavailable(Exception):
    """The filter cannot be built here (no libseccomp, or no binding for it); the message says why."""


def enabled() -> bool:
    """Whether bots get the filter (not switched off with :data:`SWITCH_VAR`)."""
    return os.environ.get(SWITCH_VAR, "").strip().lower() not in ("off", "0", "no", "false")


def reason() -> str | None:
    """None where the filter can be built, else why not (one line)."""
    try:
        program(False)
    except FilterUnavailable as exc:
        return str(exc)
    return None


@cache
def program(locks: bool = False) -> bytes:
    """The filter as a classic BPF program (the bytes bwrap's ``--seccomp FD`` reads), built once;
    :class:`FilterUnavailable` where libseccomp or its binding is missing. With ``locks`` file locks are allowed:
    the filter of a package's build step, which runs before any deal is dealt and whose processes all end with it
    (cargo and go lock their caches)."""
    try:
        import pyseccomp as sc
    except (ImportError, OSError) as exc:  # the binding, or libseccomp.so.2 it loads
        raise FilterUnavailable(f"the syscall filter needs libseccomp and pyseccomp ({exc})") from None
    arch = sc.system_arch()
    ops = {"eq": sc.EQ, "masked": sc.MASKED_EQ, "gt": sc.GT}
    filt = sc.SyscallFilter(sc.ALLOW)
    filt.set_attr(sc.Attr.ACT_BADARCH, sc.ERRNO(errno.ENOSYS))
    for rule in DENIED:
        if locks and rule.lock:
            continue
        try:
            if sc.resolve_syscall(arch, rule.name) < 0:
                continue  # not a system call of this architecture
        except (ValueError, OSError):
            continue
        if rule.arg is None:
            filt.add_rule(sc.ERRNO(rule.err), rule.name)
        elif rule.op == "masked":
            filt.add_rule(sc.ERRNO(rule.err), rule.name, sc.Arg(rule.arg, sc.MASKED_EQ, rule.value, rule.value))
        else:
            filt.add_rule(sc.ERRNO(rule.err), rule.name, sc.Arg(rule.arg, ops[rule.op], rule.value))
    fd = os.memfd_create("koikoi-seccomp", os.MFD_CLOEXEC)
    with os.fdopen(fd, "w+b") as sink:
        filt.export_bpf(sink)
        sink.seek(0)
        return sink.read()
