"""Test helper: run calls from several threads at once and report results that differ."""
from __future__ import annotations

import threading
from typing import Callable, Sequence

import numpy as np


def mismatches_under_threads(calls: Sequence[Callable[[], np.ndarray]],
                             expected: Sequence[np.ndarray], repeats: int = 100) -> list[int]:
    """Start one thread per call, each repeating its call ``repeats`` times at the same time
    as the others; return the indices of the calls whose result ever differed (bitwise) from
    ``expected`` (empty when every concurrent call was exact)."""
    wrong: list[int] = []

    def work(k: int) -> None:
        for _ in range(repeats):
            if not np.array_equal(calls[k](), expected[k]):
                wrong.append(k)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(calls))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sorted(set(wrong))
