"""How the course times code: this process's CPU time, with numpy's BLAS held to one thread.

The CPU clock (:data:`CLOCKS` ``"cpu"``) leaves out time a shared machine spends on other
programs. It does count every thread of this process, though, and numpy's bundled OpenBLAS splits
products above a size threshold over several threads whose idle helpers spin while they wait: on
a small, busy machine a multi-position model call is then billed many times its work, and the
bill swings with the neighbours' load. The decoders are single-threaded, so timed runs go
through :func:`one_blas_thread` and the CPU clock counts work, not spinning. It uses ctypes, so it
needs nothing beyond numpy; with another BLAS build it leaves the thread count alone.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from time import perf_counter, process_time

import numpy as np

Clock = Callable[[], float]
CPU_CLOCK: Clock = process_time  # this process's CPU time, blind to other programs
CLOCKS: dict[str, Clock] = {"cpu": CPU_CLOCK, "wall": perf_counter}


@cache
def _openblas_threads() -> tuple[Callable[[], int], Callable[[int], None]] | None:
    """(get, set) of the bundled OpenBLAS's thread count, or None for another BLAS build."""
    libraries = sorted((Path(np.__file__).parent.parent / "numpy.libs").glob("*openblas*"))
    try:
        blas = ctypes.CDLL(str(libraries[0]))
        return blas.scipy_openblas_get_num_threads64_, blas.scipy_openblas_set_num_threads64_
    except (IndexError, OSError, AttributeError):
        return None


@contextmanager
def one_blas_thread() -> Iterator[bool]:
    """Run the block (or, as a decorator, each call) with numpy's OpenBLAS on one thread; yields whether it could.

    The thread count in force before is restored after, so blocks may nest.

    >>> with one_blas_thread() as limited:
    ...     isinstance(limited, bool)
    True
    """
    threads = _openblas_threads()
    if threads is None:
        yield False
        return
    get, put = threads
    before = get()
    put(1)
    try:
        yield True
    finally:
        put(before)
