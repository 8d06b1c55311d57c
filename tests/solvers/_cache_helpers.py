"""Shared parts of the compile-cache tests (``test_compile_cache.py``,
``test_contact_kernel_cache.py``, ``test_cache_permissions.py``).

Each of those tests runs a small child script in a SUBPROCESS (a damaged library loaded into
the test process could kill pytest itself) and reads the JSON it prints last. The child
scripts start with :data:`COUNT_BUILDS`, which records the name of every library the child
compiles in a list ``built``.
"""
from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

from solvers import _compiled_cache as store

ROOT = pathlib.Path(__file__).resolve().parents[2]

#: the start of a child script: ``built`` lists the libraries the child compiles (by file
#: name); with ``FAIL_COMPILER`` set in its environment the same compiler (same cache key)
#: fails with "cc: internal error"
COUNT_BUILDS = r'''
import json, os, pathlib, subprocess, sys
from solvers import _compiled_build as B

built = []
real = B._run_compiler
def counting(argv):
    built.append(pathlib.Path(argv[argv.index("-o") + 1]).name)
    if os.environ.get("FAIL_COMPILER"):
        return subprocess.CompletedProcess(argv, 1, "", "cc: internal error")
    return real(argv)
B._run_compiler = counting
'''


def child_env(**extra: str) -> dict:
    """The environment of a child: this one, the repository importable, one BLAS thread."""
    return dict(os.environ, PYTHONPATH=str(ROOT), OPENBLAS_NUM_THREADS="1", **extra)


def write_child(tmp_path: pathlib.Path, source: str) -> pathlib.Path:
    """``source`` written as ``tmp_path/child.py``."""
    script = tmp_path / "child.py"
    script.write_text(source)
    return script


def run_script(tmp_path: pathlib.Path, source: str, *args, env: dict,
               timeout: float = 300) -> dict:
    """Run ``source`` with ``args`` in a subprocess; the JSON of its last output line, with
    its standard error under ``"stderr"``. Fails the test unless the child exits normally (a
    negative return code is a signal such as SIGSEGV or SIGBUS: the defect these tests guard
    against)."""
    script = write_child(tmp_path, source)
    proc = subprocess.run([sys.executable, str(script), *map(str, args)], capture_output=True,
                          text=True, cwd=ROOT, env=env, timeout=timeout)
    assert proc.returncode == 0, f"child exited with {proc.returncode}: {proc.stderr[-3000:]}"
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["stderr"] = proc.stderr
    return out


def key_of(lib: pathlib.Path) -> str:
    """The cache key a library's manifest names."""
    return store.manifest_path(lib).read_text().splitlines()[1].split()[1]


def forge_manifest(lib: pathlib.Path, key: str) -> None:
    """Write a manifest naming ``key`` and the hash of the library now at ``lib``."""
    store.manifest_path(lib).write_text(store.manifest_text(key, store.sha256_file(lib)))


def truncate(lib: pathlib.Path, divisor: int) -> bytes:
    """Cut ``lib`` to its first ``len // divisor`` bytes; the original bytes."""
    data = lib.read_bytes()
    lib.write_bytes(data[:len(data) // divisor])
    return data


def flip_code_bits(lib: pathlib.Path) -> None:
    """Flip one bit in each of 8 bytes a third of the way into ``lib`` (in its code)."""
    data = bytearray(lib.read_bytes())
    for i in range(len(data) // 3, len(data) // 3 + 64, 8):
        data[i] ^= 0x10
    lib.write_bytes(bytes(data))
