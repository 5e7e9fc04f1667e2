r"""The roofline on this machine: memory bandwidth, matmul peak, last-level cache, and a weight stack timed against them.

A call that scores n positions through weights of W bytes and 2·n·P flops (P weights) takes at least

.. math::

    T(n) = \max\!\left(\frac{\text{bytes}(n)}{B}, \frac{\text{flops}(n)}{F}\right),

B the memory bandwidth (a STREAM-like triad, :func:`triad_bandwidth`) and F the matmul rate
(:func:`matmul_peak`). While the weights must come from memory (the stack is several times the
last-level cache, :func:`llc_bytes`), T is flat in n up to the crossover
:math:`n^* \approx 2F/B \cdot (\text{bytes per weight}/2)`, then grows with n: that flat part is what
speculative decoding spends, scoring γ + 1 positions for the price of one. All times use the
caller's clock (the course uses this process's CPU time) and one BLAS thread, like every timed
model call (:mod:`specdec_lib.timing`): F is one core's matmul rate.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from time import perf_counter
from typing import TYPE_CHECKING

import numpy as np

from .. import _validate
from ..timing import Clock, one_blas_thread
from .report import Roofline

if TYPE_CHECKING:
    from ..transformer import Transformer
    from .run import Progress

STACK_CACHE_MULTIPLE = 4  # the timed weight stack is this many times the last-level cache
STACK_WIDTH = 1024  # float32 d × d matrices: 4 MiB each
FALLBACK_LLC = 32 * 2**20  # used when sysfs does not say (recorded as 0 in the report)


def llc_bytes(root: str = "/sys/devices/system/cpu/cpu0/cache") -> int:
    """Size of the last-level (highest-level data or unified) cache from sysfs, in bytes; 0 if unreadable.

    >>> llc_bytes("/nonexistent")
    0
    """
    best = (0, 0)
    for index in Path(root).glob("index*"):
        try:
            level = int((index / "level").read_text())
            kind = (index / "type").read_text().strip()
            size = (index / "size").read_text().strip()
        except (OSError, ValueError):
            continue
        if kind == "Instruction":
            continue
        unit = {"K": 2**10, "M": 2**20, "G": 2**30}.get(size[-1], 1)
        best = max(best, (level, int(size.rstrip("KMG")) * unit))
    return best[1]


def triad_bandwidth(elements: int, repeats: int = 5, clock: Clock = perf_counter) -> float:
    """Bytes per second of a := b + s·c on float64 arrays of ``elements`` (best of ``repeats``).

    numpy makes two passes (a = s·c, then a += b), moving five arrays' worth of bytes
    (read c, write a; read a, read b, write a); that traffic is what is counted.

    >>> triad_bandwidth(10_000, repeats=2) > 0
    True
    """
    elements = _validate.count("elements", elements, minimum=1)
    b, c = np.ones(elements), np.full(elements, 2.0)
    a = np.empty(elements)
    best = np.inf
    for _ in range(_validate.count("repeats", repeats, minimum=1)):
        start = clock()
        np.multiply(c, 3.0, out=a)
        np.add(a, b, out=a)
        best = min(best, clock() - start)
    return 5 * 8 * elements / max(best, 1e-9)


@one_blas_thread()
def matmul_peak(size: int = 1024, repeats: int = 3, clock: Clock = perf_counter) -> float:
    """Flops per second of a float32 ``size`` × ``size`` matrix product on one BLAS thread (2·size³ flops; best of ``repeats``).

    >>> matmul_peak(64, repeats=2) > 0
    True
    """
    size = _validate.count("size", size, minimum=1)
    x = np.random.default_rng(0).standard_normal((size, size)).astype(np.float32)
    best = np.inf
    for _ in range(_validate.count("repeats", repeats, minimum=1)):
        start = clock()
        x @ x
        best = min(best, clock() - start)
    return 2 * size**3 / max(best, 1e-9)


def stack_cost(n: int, layers: int, width: int) -> tuple[int, int]:
    """(bytes, flops) of scoring n positions through ``layers`` float32 width × width matrices.

    Bytes: every weight once plus each layer's activations in and out; flops: 2·n·width² per layer.

    >>> stack_cost(1, 2, 4)
    (192, 64)
    """
    weights = 4 * layers * width * width
    return weights + 2 * 4 * n * width * layers, 2 * n * width * width * layers


def crossover(layers: int, width: int, bandwidth: float, peak: float) -> float:
    """The n at which bytes(n)/B = flops(n)/F for the stack (inf if compute never catches up).

    >>> round(crossover(8, 1024, bandwidth=10e9, peak=100e9), 2)
    20.81
    """
    weights, _ = stack_cost(0, layers, width)
    per_position_bytes = 8 * width * layers
    per_position_flops = 2 * width * width * layers
    denominator = per_position_flops / peak - per_position_bytes / bandwidth
    return float(weights / bandwidth / denominator) if denominator > 0 else float("inf")


@one_blas_thread()
def time_stack(
    positions: Sequence[int],
    layers: int,
    width: int,
    repeats: int = 3,
    clock: Clock = perf_counter,
    progress: Progress | None = None,
) -> list[float]:
    """Median seconds to push n positions through the stack, for each n in ``positions``.

    >>> len(time_stack([1, 2], layers=2, width=8, repeats=1))
    2
    """
    rng = np.random.default_rng(0)
    stack = [rng.random((width, width), dtype=np.float32) * np.float32(2 / width) for _ in range(layers)]
    times = []
    for n in positions:
        x0 = rng.random((_validate.count("positions", n, minimum=1), width), dtype=np.float32)
        samples = []
        for _ in range(
            _validate.count("repeats", repeats, minimum=1) + 1
        ):  # the first pass pages the stack in
            start = clock()
            x = x0
            for weight in stack:
                x = x @ weight
            samples.append(clock() - start)
        times.append(float(min(samples[1:])))
        if progress is not None:
            progress.step(f"roofline n={n}")
    return times


@one_blas_thread()
def measure_roofline(
    target: Transformer,
    max_positions: int = 1024,
    repeats: int = 3,
    clock: Clock = perf_counter,
    progress: Progress | None = None,
) -> Roofline:
    """B, F and the cache size; a stack of :data:`STACK_CACHE_MULTIPLE` × LLC timed for n = 1, 2, 4, … ``max_positions``.

    Predicted crossover: :func:`crossover` from B and F. Measured crossover: where the measured
    asymptotes meet, T(1) (flat) against T(n_max)/n_max per position. The trained target's call is
    timed ``max(20, 10 · repeats)`` times (median). ``target_flat`` sets the
    trained ``target``'s one-position call T(1) against its parts: its weights over B, its flops
    over F, and the same-depth model at width 8 (all per-call work, almost no arithmetic).
    """
    from ..transformer import Config, Transformer

    llc = llc_bytes()
    cache = llc or FALLBACK_LLC
    bandwidth = triad_bandwidth(STACK_CACHE_MULTIPLE * cache // (3 * 8), repeats=max(3, repeats), clock=clock)
    peak = matmul_peak(repeats=max(2, repeats), clock=clock)
    layers = -(-STACK_CACHE_MULTIPLE * cache // (4 * STACK_WIDTH * STACK_WIDTH))
    positions = [
        2**k for k in range(int(np.log2(_validate.count("max_positions", max_positions, minimum=2))) + 1)
    ]
    measured = time_stack(positions, layers, STACK_WIDTH, repeats, clock, progress)
    predicted = [
        max(b / bandwidth, f / peak) for b, f in (stack_cost(n, layers, STACK_WIDTH) for n in positions)
    ]
    twin = Transformer.random(
        Config(target.config.n_layers, 8, 1, target.config.window, 1, target.config.vocab)
    )
    flat = {}
    for name, model in (("target", target), ("same_depth_width_8", twin)):
        cache_ = model.new_cache()
        model.score(cache_, np.arange(64) % model.config.vocab)
        samples = []
        for _ in range(max(20, 10 * repeats)):
            start = clock()
            model.score(cache_, [1])
            samples.append(clock() - start)
            cache_.rollback(64)
        flat[f"{name}_s"] = float(np.median(samples))
    flat["weights_over_bandwidth_s"] = 4 * target.parameter_count / bandwidth
    flat["flops_over_peak_s"] = target.config.flops_per_token() / peak
    return Roofline(
        bandwidth_gb_s=bandwidth / 1e9,
        peak_gflop_s=peak / 1e9,
        llc_bytes=llc,
        stack_bytes=stack_cost(0, layers, STACK_WIDTH)[0],
        stack_layers=layers,
        stack_width=STACK_WIDTH,
        positions=tuple(positions),
        predicted_s=tuple(predicted),
        measured_s=tuple(measured),
        crossover_predicted=crossover(layers, STACK_WIDTH, bandwidth, peak),
        crossover_measured=float(measured[0] / (measured[-1] / positions[-1])),
        target_flat=flat,
    )
