"""Private helpers of :mod:`solvers.compiled`: integrity, permissions and housekeeping of
the disk cache (and the errors of compiling and loading).

A cache entry is a shared library ``dbk_<name>_<key>.so``, its C source (``.c``, for
inspection) and a manifest ``dbk_<name>_<key>.so.sha256``::

    dynablocks compiled-function cache manifest v1
    key <sha256 of the generated source, the compiler command and the flags>
    library-sha256 <sha256 of the library's bytes>

:func:`verify_library` checks both lines before a library is loaded: loading a truncated or
bit-flipped library can kill the process (SIGBUS, SIGSEGV) and another function's library
gives wrong numbers silently. Entries are written in a private build directory
(:func:`build_directory`) and renamed into place atomically, so a reader never sees a
half-written file.

Permissions (POSIX; the checks OpenSSH's ``StrictModes`` makes for ``~/.ssh``): a library
runs as the user who loads it, so the hash alone does not make it safe: anyone who can write
the cache directory can plant a library together with a matching manifest. Hence
:func:`unsafe_directory_reason` accepts a cache directory only when it, and each parent up
to the first sticky directory owned by root or by this user (``/tmp``) or up to ``/``, is
owned by this user (or root) and has no group or other write bit; :func:`verify_library`
requires the same of the library file and its manifest (regular files, not symbolic links).
:func:`make_private_directory` creates missing directories with mode 0700. Libraries
written here lose their group/other write bits before they are renamed into place
(a umask of 002 would otherwise make them group-writable and so refused).
:func:`private_cache_dir` applies this to a requested directory: a directory that is not
private is set aside with one :class:`CacheSecurityWarning` and a private per-user one is
used instead (``~/.cache/dynablocks/compiled``, else ``<tempdir>/dynablocks-<uid>/compiled``);
:class:`UnsafeCacheError` when none is private. Processes of the same user (Monte Carlo or
Dask workers on one machine, or on several machines sharing the directory over NFS under
the same uid) share one cache as before; a cache shared between different users is
refused by design (each user gets a private one).

Housekeeping: build directories are named ``.dbk-tmp-<host>-<pid>-<random>``. The
directories and compiler processes of this process are removed and killed at exit
(``atexit``: a short script may exit while a background compilation runs); those of a
process killed hard are removed by the next compilation in that directory
(:func:`sweep_stale_temporaries`: owner gone on this host, or older than ``STALE_AGE_S``).
"""
from __future__ import annotations

import atexit
import contextlib
import hashlib
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from pathlib import Path
from typing import Iterator

from .errors import (CacheSecurityWarning, CompileError, CompilerNotFound,
                     UnsafeCacheError)

__all__: list[str] = []  # private module

MANIFEST_SUFFIX = ".sha256"
MANIFEST_HEADER = "dynablocks compiled-function cache manifest v1"
TMP_PREFIX = ".dbk-tmp-"
HOST = hashlib.sha256(socket.gethostname().encode()).hexdigest()[:8]
"""Short hash of the host name, in temporary names (a cache may be shared over NFS)."""
STALE_AGE_S = 1200.0
"""Age after which any build directory is stale (twice the default compile timeout)."""

PRIVATE_DIR_MODE = 0o700
"""Mode of the cache directories created here (owner only)."""

_LEGACY_TMP = re.compile(r"dbk_\w+\.[a-z0-9_]{8}\.(?:c|so)")
"""Temporary files of the earlier layout (``tempfile.mkstemp`` next to the library)."""

active_processes: set = set()      # compiler processes of this process
active_temporaries: set = set()    # build directories of this process
_exiting: list[bool] = [False]
_registry = threading.Lock()       # the exit clean-up and the registrations take turns




def exiting() -> bool:
    """True once this process has started its exit clean-up (compilers are being killed:
    a compilation failing now is no news for the user)."""
    return _exiting[0]


# ---------------------------------------------------------------- integrity
def manifest_path(library: Path) -> Path:
    """The manifest next to ``library`` (its name plus ``.sha256``)."""
    return library.with_name(library.name + MANIFEST_SUFFIX)


def sha256_file(path: Path | str) -> str:
    """Hex sha256 of a file's bytes (read in 1 MiB blocks)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def manifest_text(key: str, library_sha256: str) -> str:
    """The manifest of a library (module docstring)."""
    return f"{MANIFEST_HEADER}\nkey {key}\nlibrary-sha256 {library_sha256}\n"


def verify_library(library: Path, key: str) -> bool:
    """True when ``library`` may be loaded for cache key ``key``.

    Its manifest must exist, name ``key`` and give the sha256 of the library's current
    bytes, and both files must be regular files owned by this user (or root) without
    group or other write permission (:func:`unsafe_file_reason`). False for a missing,
    truncated or bit-flipped library, a missing or damaged manifest, another function's
    library or manifest under this name, or a file others could have written. Reads the
    whole library once (about 0.6 ms per MB; load time only, never per call). The
    directory is checked by the caller (:func:`unsafe_directory_reason`).
    """
    if unsafe_file_reason(library) or unsafe_file_reason(manifest_path(library)):
        return False
    try:
        lines = manifest_path(library).read_text(encoding="ascii").splitlines()
        if len(lines) != 3 or lines[0] != MANIFEST_HEADER or lines[1] != f"key {key}":
            return False
        return lines[2] == f"library-sha256 {sha256_file(library)}"
    except (OSError, UnicodeError, ValueError):
        return False


# ---------------------------------------------------------------- permissions
def _strict() -> bool:
    """Whether ownership and mode bits are checked (POSIX; Windows has ACLs instead)."""
    return os.name == "posix" and hasattr(os, "geteuid")


def _owner_and_mode_reason(st: os.stat_result) -> str | None:
    """Why an entry with status ``st`` could be written by someone else, or None."""
    euid = os.geteuid()
    if st.st_uid not in (euid, 0):
        return f"is owned by uid {st.st_uid}, not by you (uid {euid}) or root"
    mode = stat.S_IMODE(st.st_mode)
    if mode & stat.S_IWOTH:
        return f"is writable by all users (mode {mode:04o})"
    if mode & stat.S_IWGRP:
        return f"is writable by its group (mode {mode:04o})"
    return None


def unsafe_file_reason(path: Path | str) -> str | None:
    """Why the file ``path`` must not be trusted, or None when it may be.

    Trusted: a regular file (not a symbolic link) owned by this user or root, without group
    or other write permission. A missing file gives a reason too. Always None off POSIX.
    """
    if not _strict():
        return None
    try:
        st = os.lstat(path)
    except OSError as exc:
        return f"{path}: {exc.strerror or exc}"
    if not stat.S_ISREG(st.st_mode):
        return f"{path} is not a regular file"
    reason = _owner_and_mode_reason(st)
    return None if reason is None else f"{path} {reason}"


def unsafe_directory_reason(directory: Path | str) -> str | None:
    """Why the cache directory ``directory`` must not be used, or None when it may be.

    The directory (symbolic links resolved, as ssh does) and then each parent must be
    owned by this user or root and have no group or other write bit; the walk stops at
    ``/`` or at the first parent that is sticky and owned by root or this user (such as
    ``/tmp``: others may create entries there but cannot rename or remove ours). Always
    None off POSIX.

    Returns
    -------
    str or None
        E.g. ``"/tmp/shared is writable by all users (mode 0777)"``.
    """
    if not _strict():
        return None
    real = os.path.realpath(directory)
    try:
        st = os.stat(real)
    except OSError as exc:
        return f"{real}: {exc.strerror or exc}"
    if not stat.S_ISDIR(st.st_mode):
        return f"{real} is not a directory"
    euid = os.geteuid()
    while True:
        reason = _owner_and_mode_reason(st)
        if reason is not None:
            return f"{real} {reason}"
        parent = os.path.dirname(real)
        if parent == real:
            return None
        try:
            st = os.stat(parent)
        except OSError as exc:
            return f"{parent}: {exc.strerror or exc}"
        if st.st_mode & stat.S_ISVTX and st.st_uid in (0, euid):
            return None
        real = parent


def make_private_directory(directory: Path) -> None:
    """Create ``directory`` and its missing parents with mode 0700 (existing ones are left
    as they are).

    Raises
    ------
    OSError
        When a directory cannot be created.
    """
    missing = []
    d = Path(os.path.abspath(directory))
    while not d.exists() and d != d.parent:
        missing.append(d)
        d = d.parent
    for d in reversed(missing):
        try:
            os.mkdir(d, PRIVATE_DIR_MODE)
        except FileExistsError:      # another process was faster: checked by the caller
            continue
        os.chmod(d, PRIVATE_DIR_MODE)  # whatever the umask


def drop_shared_write(path: Path) -> None:
    """Remove the group and other write bits of a file written here (see the module
    docstring)."""
    mode = stat.S_IMODE(os.stat(path).st_mode)
    if mode & (stat.S_IWGRP | stat.S_IWOTH):
        os.chmod(path, mode & ~(stat.S_IWGRP | stat.S_IWOTH))


def fallback_cache_dirs() -> list[Path]:
    """Private per-user directories tried when the requested cache directory is refused:
    ``~/.cache/dynablocks/compiled``, then ``<tempdir>/dynablocks-<uid>/compiled``."""
    out = []
    try:
        out.append(Path.home() / ".cache" / "dynablocks" / "compiled")
    except (RuntimeError, KeyError):      # no home directory
        pass
    uid = os.geteuid() if hasattr(os, "geteuid") else os.getpid()
    out.append(Path(tempfile.gettempdir()) / f"dynablocks-{uid}" / "compiled")
    return out


_WARNED_DIRS: set[str] = set()


def _warn_unsafe(message: str) -> None:
    """Warn once per message, attributed to the first caller outside ``solvers``."""
    if message in _WARNED_DIRS:
        return
    _WARNED_DIRS.add(message)
    here = os.path.dirname(os.path.abspath(__file__))
    level, frame = 1, sys._getframe(0)
    while frame is not None and \
            os.path.dirname(os.path.abspath(frame.f_code.co_filename)) == here:
        frame = frame.f_back
        level += 1
    warnings.warn(message, CacheSecurityWarning, stacklevel=level)


def private_cache_dir(requested: str | Path) -> Path:
    """The cache directory to use for ``requested``: itself when it is private, else (with
    one :class:`CacheSecurityWarning`) the first private one of
    :func:`fallback_cache_dirs`.

    Missing directories are created with mode 0700. Private means: owned by this user (or
    root) with no group or other write bit, and so are its parents up to a sticky ``/tmp``
    (:func:`unsafe_directory_reason`); a library planted in a
    directory others can write is then never loaded.

    Raises
    ------
    UnsafeCacheError
        When neither ``requested`` nor any fallback directory is private.
    """
    requested = Path(requested).expanduser()
    refused: list[str] = []
    seen: set[str] = set()
    for cand in [requested, *fallback_cache_dirs()]:
        real = os.path.realpath(cand)
        if real in seen:
            continue
        seen.add(real)
        try:
            make_private_directory(cand)
        except OSError as exc:
            refused.append(f"{cand} cannot be created ({exc.strerror or exc})")
            continue
        reason = unsafe_directory_reason(cand)
        if reason is not None:
            refused.append(reason + " (a library planted there would run as you)")
            continue
        if refused:
            _warn_unsafe(f"compile cache {requested} is not used: {refused[0]}. Using {cand} "
                         f"instead. Point DYNABLOCKS_CACHE_DIR (or cache_dir=) at a "
                         f"directory only you can write ('chmod 700 DIR'; its parents must "
                         f"not be writable by others either).")
        return cand
    raise UnsafeCacheError("no private compile cache directory: " + "; ".join(refused))


def fsync(path: Path) -> None:
    """Flush a written file to disk before it is renamed into place (best effort)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# ---------------------------------------------------------------- housekeeping
def kill_process_group(proc: subprocess.Popen) -> None:
    """Kill a compiler started with ``start_new_session`` (driver and ``cc1`` together)."""
    try:
        if os.name == "posix":
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
    except OSError:
        pass


@contextlib.contextmanager
def tracked_process(proc: subprocess.Popen) -> Iterator[subprocess.Popen]:
    """Within the block, ``proc`` is killed if this process exits (at once when the exit
    clean-up has already run: registration and clean-up take one lock, so no compiler
    started by a background thread during the exit outlives the program)."""
    with _registry:
        if _exiting[0]:
            kill_process_group(proc)
        active_processes.add(proc)
    try:
        yield proc
    finally:
        active_processes.discard(proc)


@contextlib.contextmanager
def build_directory(cache_dir: Path) -> Iterator[Path]:
    """A private build directory in ``cache_dir``, removed after the block or at exit.

    Stale build directories of dead processes are swept first. Once the exit clean-up has
    run, no directory is made (:class:`~solvers.errors.CompileError`): a background thread
    still compiling while the program exits would leave it behind.
    """
    sweep_stale_temporaries(cache_dir)
    with _registry:
        if _exiting[0]:
            raise CompileError("the program is exiting: no new compilation is started")
        tmp = Path(tempfile.mkdtemp(prefix=f"{TMP_PREFIX}{HOST}-{os.getpid()}-",
                                    dir=cache_dir))
        active_temporaries.add(tmp)
    try:
        yield tmp
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        active_temporaries.discard(tmp)


def _owner_alive(name: str) -> bool:
    """Whether the process that made temporary ``name`` may still run."""
    parts = name[len(TMP_PREFIX):].split("-")
    if len(parts) < 2 or parts[0] != HOST or not parts[1].isdigit():
        return True                       # another host (shared cache) or unknown: by age
    try:
        os.kill(int(parts[1]), 0)
    except ProcessLookupError:
        return False
    except (OSError, OverflowError):      # PermissionError: alive, another user's
        return True
    return True


def sweep_stale_temporaries(cache_dir: Path, *, max_age_s: float = STALE_AGE_S) -> int:
    """Remove the temporaries in ``cache_dir`` whose process is gone (this host) or that
    are older than ``max_age_s``, and temporary files of the earlier cache layout
    (``dbk_<name>.<8 random characters>.c`` or ``.so``) older than ``max_age_s``. Returns
    how many were removed."""
    try:
        entries = list(os.scandir(cache_dir))
    except OSError:
        return 0
    n = 0
    now = time.time()
    for e in entries:
        ours = e.name.startswith(TMP_PREFIX)
        if not ours and _LEGACY_TMP.fullmatch(e.name) is None:
            continue
        try:
            old = now - e.stat(follow_symlinks=False).st_mtime > max_age_s
        except OSError:
            continue
        if old or (ours and not _owner_alive(e.name)):
            if e.is_dir(follow_symlinks=False):
                shutil.rmtree(e.path, ignore_errors=True)
            else:
                try:
                    os.unlink(e.path)
                except OSError:
                    pass
            n += 1
    return n


def _forget_parent_builds() -> None:
    """In a forked child, the parent's compilers and temporaries are not ours to clean."""
    active_processes.clear()
    active_temporaries.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_parent_builds)


@atexit.register
def _cleanup_at_exit() -> None:
    """Kill compilers still running (a background build outlived the program) and remove
    their build directories, so that no orphan files stay in the cache."""
    with _registry:
        _exiting[0] = True
        procs, temps = list(active_processes), list(active_temporaries)
    for proc in procs:
        kill_process_group(proc)
    for d in temps:   # a thread may still write into it for a moment: a few tries
        for _ in range(20):
            shutil.rmtree(d, ignore_errors=True)
            if not os.path.exists(d):
                break
            time.sleep(0.01)
