"""Private helpers of :mod:`solvers.compiled`: integrity and housekeeping of the disk cache.

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
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Iterator

__all__: list[str] = []  # private module

MANIFEST_SUFFIX = ".sha256"
MANIFEST_HEADER = "dynablocks compiled-function cache manifest v1"
TMP_PREFIX = ".dbk-tmp-"
HOST = hashlib.sha256(socket.gethostname().encode()).hexdigest()[:8]
"""Short hash of the host name, in temporary names (a cache may be shared over NFS)."""
STALE_AGE_S = 1200.0
"""Age after which any build directory is stale (twice the default compile timeout)."""

_LEGACY_TMP = re.compile(r"dbk_\w+\.[a-z0-9_]{8}\.(?:c|so)")
"""Temporary files of the earlier layout (``tempfile.mkstemp`` next to the library)."""

active_processes: set = set()      # compiler processes of this process
active_temporaries: set = set()    # build directories of this process
_exiting: list[bool] = [False]


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
    bytes. False for a missing, truncated or bit-flipped library, a missing or damaged
    manifest, or another function's library or manifest under this name. Reads the whole
    library once (about 0.6 ms per MB; load time only, never per call).
    """
    try:
        lines = manifest_path(library).read_text(encoding="ascii").splitlines()
        if len(lines) != 3 or lines[0] != MANIFEST_HEADER or lines[1] != f"key {key}":
            return False
        return lines[2] == f"library-sha256 {sha256_file(library)}"
    except (OSError, UnicodeError, ValueError):
        return False


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
    """Within the block, ``proc`` is killed if this process exits."""
    active_processes.add(proc)
    try:
        yield proc
    finally:
        active_processes.discard(proc)


@contextlib.contextmanager
def build_directory(cache_dir: Path) -> Iterator[Path]:
    """A private build directory in ``cache_dir``, removed after the block or at exit.

    Stale build directories of dead processes are swept first.
    """
    sweep_stale_temporaries(cache_dir)
    tmp = Path(tempfile.mkdtemp(prefix=f"{TMP_PREFIX}{HOST}-{os.getpid()}-", dir=cache_dir))
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
    _exiting[0] = True
    for proc in list(active_processes):
        kill_process_group(proc)
    for d in list(active_temporaries):
        shutil.rmtree(d, ignore_errors=True)
