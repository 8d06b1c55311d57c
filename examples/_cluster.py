"""Dask cluster helpers shared by the Monte Carlo examples (``--cluster``, extra [cluster])."""
from __future__ import annotations

import argparse
import contextlib
import os
from typing import Iterator, Optional

OVERHEAD = ("starting the worker processes, importing the project in each and shipping every "
            "run to them and back")


def add_cluster_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--cluster`` (run on a Dask ``LocalCluster``) and ``--workers N`` (default 2)."""
    parser.add_argument("--cluster", action="store_true",
                        help="run on a dask LocalCluster (extra [cluster]); on a machine with 2 "
                             f"cores or fewer this is often slower than serial: {OVERHEAD} "
                             "costs more than the cores it adds")
    parser.add_argument("--workers", type=int, default=2,
                        help="worker processes of the --cluster LocalCluster")


def few_cores_note(workers: int, cores: Optional[int] = None) -> Optional[str]:
    """A note for the user when a cluster of ``workers`` processes cannot beat a serial run by
    much: ``cores`` (default ``os.cpu_count()``) is 2 or fewer, or less than ``workers``;
    None otherwise."""
    cores = os.cpu_count() if cores is None else cores
    if cores is None or (cores > 2 and cores >= workers):
        return None
    return (f"note: {workers} worker processes on {cores} core(s): expect little or no speed-up "
            f"over a serial run, often a slow-down ({OVERHEAD} costs more than the cores add; "
            "the cluster pays off with more cores or longer runs)")


def executor_name(args: argparse.Namespace) -> str:
    """``"dask LocalCluster(N)"`` or ``"serially"``, for the summary line."""
    return f"dask LocalCluster({args.workers})" if args.cluster else "serially"


@contextlib.contextmanager
def executor(args: argparse.Namespace) -> Iterator[Optional[object]]:
    """A ``dask.distributed.Client`` on a ``LocalCluster`` of ``args.workers`` one-thread worker
    processes when ``args.cluster`` is set (closed on exit), else None (run serially); prints
    :func:`few_cores_note` when the machine has too few cores for a speed-up."""
    if not args.cluster:
        yield None
        return
    try:
        import distributed
    except ImportError:
        raise SystemExit("--cluster needs dask.distributed: pip install 'dynablocks[cluster]' "
                         "(or pip install 'dask[distributed]')") from None
    note = few_cores_note(args.workers)
    if note:
        print(note)
    cluster = distributed.LocalCluster(n_workers=args.workers, threads_per_worker=1,
                                       processes=True, dashboard_address=None)
    client = distributed.Client(cluster)
    try:
        yield client
    finally:
        client.close()
        cluster.close()
