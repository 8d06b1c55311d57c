"""Dask cluster helpers shared by the Monte Carlo examples (``--cluster``, extra [cluster])."""
from __future__ import annotations

import argparse
import contextlib
from typing import Iterator, Optional


def add_cluster_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--cluster`` (run on a Dask ``LocalCluster``) and ``--workers N`` (default 2)."""
    parser.add_argument("--cluster", action="store_true",
                        help="run on a dask LocalCluster (extra [cluster])")
    parser.add_argument("--workers", type=int, default=2,
                        help="worker processes of the --cluster LocalCluster")


def executor_name(args: argparse.Namespace) -> str:
    """``"dask LocalCluster(N)"`` or ``"serially"``, for the summary line."""
    return f"dask LocalCluster({args.workers})" if args.cluster else "serially"


@contextlib.contextmanager
def executor(args: argparse.Namespace) -> Iterator[Optional[object]]:
    """A ``dask.distributed.Client`` on a ``LocalCluster`` of ``args.workers`` one-thread worker
    processes when ``args.cluster`` is set (closed on exit), else None (run serially)."""
    if not args.cluster:
        yield None
        return
    try:
        import distributed
    except ImportError:
        raise SystemExit("--cluster needs dask.distributed: pip install 'dynablocks[cluster]' "
                         "(or pip install 'dask[distributed]')") from None
    cluster = distributed.LocalCluster(n_workers=args.workers, threads_per_worker=1,
                                       processes=True, dashboard_address=None)
    client = distributed.Client(cluster)
    try:
        yield client
    finally:
        client.close()
        cluster.close()
