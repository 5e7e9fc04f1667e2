"""One look for every figure in the course: the same colour always means the same quantity.

p (target), q (draft), min(p, q) (accepted mass) and the residual keep their colours on
every page. Figures keep a white background so they read the same in light and dark themes.
The palette stays apart under protanopia, deuteranopia and tritanopia (CIELAB distance ≥ 20
between any two colours after simulating each, Machado et al. 2009) and each colour has at least
3:1 contrast on white (WCAG 1.4.11); ``tests/test_accessibility.py`` checks both. Colour is never
the only cue: label the series (legend, direct labels) or vary markers and hatching too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ._types import Probabilities
from .verification import VerifiedRound

if TYPE_CHECKING:  # matplotlib is imported where a figure is drawn: specdec_lib needs only numpy
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

COLORS = {
    "target": "#163f8f",  # p (dark blue)
    "draft": "#c0840f",  # q (ochre)
    "accepted": "#1a9f5c",  # min(p, q) (green)
    "residual": "#a8170f",  # r = [p - q]+ normalised (dark red)
    "baseline": "#6b6b6b",  # plain autoregressive decoding (grey)
    "measured": "#9a32e6",  # anything timed on the build machine (violet)
}
HATCHES = ("", "//", "..", "xx", "\\\\", "++")  # the second cue beside colour, one per series of a figure


def bar_distributions(
    ax: Axes,
    tokens: Sequence[str],
    series: Mapping[str, tuple[str, Probabilities]],
    *,
    title: str | None = None,
) -> None:
    """Grouped bars of several distributions over the same tokens.

    ``series`` maps a label to (colour key or colour, probability vector). Each series also gets its
    own hatching (``HATCHES``), so the legend can be read without telling colours apart.

    >>> import matplotlib; matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots()
    >>> bar_distributions(ax, ["A", "B"], {"p": ("target", [0.5, 0.5])})
    >>> ax.get_ylabel()
    'probability'
    """
    width = 0.8 / max(len(series), 1)
    x = np.arange(len(tokens))
    for i, (label, (colour, values)) in enumerate(series.items()):
        ax.bar(
            x + (i - (len(series) - 1) / 2) * width,
            np.asarray(values, dtype=float),
            width,
            label=label,
            color=COLORS.get(colour, colour),
            hatch=HATCHES[i % len(HATCHES)],
            edgecolor="white",
            linewidth=0,
        )
    ax.set_xticks(x, tokens)
    ax.set_xlabel("token")
    ax.set_ylabel("probability")
    ax.set_ylim(0, 1.05)
    ax.legend(frameon=False)
    if title:
        ax.set_title(title)


class DescribedFigure:
    """A matplotlib figure with its alt text: what the figure shows, in words, for readers who cannot see it.

    Make it the last expression of a cell. It displays as a PNG whose ``Description`` text chunk holds
    the alt text (the site's build copies it into the ``<img alt>``), and as the alt text itself where
    only text is shown (so nbval compares the description, numbers included). The figure is closed,
    so Jupyter does not show it a second time.

    >>> import matplotlib; matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots()
    >>> shown = DescribedFigure(fig, "Acceptance falls from 0.87 to 0.55.")
    >>> shown
    Figure: Acceptance falls from 0.87 to 0.55.
    >>> shown._repr_png_()[:4] == b"\\x89PNG"
    True
    """

    def __init__(self, fig: Figure, alt: str) -> None:
        if not isinstance(alt, str) or not alt.strip():
            raise ValueError(
                "alt: describe what the figure shows in words (an empty alt text hides it from screen readers)"
            )
        import matplotlib.pyplot as plt

        self.alt = " ".join(alt.split())
        self._png = _png_bytes(fig, self.alt)
        plt.close(fig)

    def _repr_png_(self) -> bytes:
        return self._png

    def __repr__(self) -> str:
        return f"Figure: {self.alt}"


def _png_bytes(fig: Figure, alt: str) -> bytes:
    import io

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100, bbox_inches="tight", metadata={"Description": alt})
    return buffer.getvalue()


def plot_round_trace(
    ax: Axes, tokens: Sequence[str], rounds: Sequence[tuple[Sequence[int], VerifiedRound]]
) -> dict[str, int]:
    """One row per verification round, one box per token, in the style of Leviathan et al. (2023) Fig. 5.

    ``rounds`` is a list of (draft tokens, ``VerifiedRound``). Accepted drafts are green, the
    rejected draft red and struck through, drafts discarded after it grey and hatched, the
    correction (from the residual) and the bonus token (from the target's last row) follow.

    >>> import matplotlib; matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> from specdec_lib import VerifiedRound
    >>> fig, ax = plt.subplots()
    >>> plot_round_trace(ax, "ABC", [((2, 1), VerifiedRound((0,), 0, False))])
    {'accepted': 0, 'rejected': 1, 'discarded': 1, 'correction': 1, 'bonus': 0}
    """
    from matplotlib.patches import Patch, Rectangle

    styles: dict[str, dict[str, Any]] = {
        "accepted": dict(facecolor=COLORS["accepted"], edgecolor="black"),
        "rejected": dict(facecolor="white", edgecolor=COLORS["residual"], linewidth=2),
        "discarded": dict(facecolor="white", edgecolor=COLORS["baseline"], hatch="//"),
        "correction": dict(facecolor=COLORS["residual"], edgecolor="black"),
        "bonus": dict(facecolor=COLORS["target"], edgecolor="black"),
    }
    counts = dict.fromkeys(styles, 0)
    for row, (drafts, result) in enumerate(rounds):
        y = len(rounds) - 1 - row
        k = result.num_accepted
        boxes = [("accepted", d) for d in drafts[:k]]
        if k < len(drafts):
            boxes += [("rejected", drafts[k])] + [("discarded", d) for d in drafts[k + 1 :]]
            boxes += [("correction", result.tokens[-1])]
        else:
            boxes += [("bonus", result.tokens[-1])]
        for col, (kind, token) in enumerate(boxes):
            counts[kind] += 1
            ax.add_patch(Rectangle((col, y + 0.1), 0.9, 0.8, **styles[kind]))
            light = kind in ("rejected", "discarded")
            ax.text(
                col + 0.45,
                y + 0.5,
                tokens[token],
                ha="center",
                va="center",
                fontsize=12,
                color="black" if light else "white",
                fontweight="bold",
            )
            if kind == "rejected":
                ax.plot([col + 0.1, col + 0.8], [y + 0.2, y + 0.8], color=COLORS["residual"], lw=2)
    width = max(len(d) + 2 for d, _ in rounds)
    ax.set_xlim(-0.1, width)
    ax.set_ylim(0, len(rounds))
    ax.set_yticks(
        [len(rounds) - 0.5 - i for i in range(len(rounds))], [f"round {i + 1}" for i in range(len(rounds))]
    )
    ax.set_xticks([])
    for side in ("top", "right", "bottom", "left"):
        ax.spines[side].set_visible(False)
    labels = {
        "accepted": "accepted draft (output)",
        "rejected": "rejected draft",
        "discarded": "discarded unseen",
        "correction": "correction from r (output)",
        "bonus": "bonus from p (output)",
    }
    ax.legend(
        [Patch(**styles[k]) for k in styles],
        [labels[k] for k in styles],
        frameon=False,
        loc="upper left",
        bbox_to_anchor=(1, 1),
        fontsize=8,
    )
    return counts


def plot_overlap(ax: Axes, tokens: Sequence[str], p: Probabilities, q: Probabilities) -> None:
    """p and q as outlined bars over the same tokens, their overlap min(p, q) filled: its area is α.

    >>> import matplotlib; matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots()
    >>> plot_overlap(ax, "AB", [0.5, 0.5], [0.25, 0.75])
    >>> ax.get_ylabel()
    'probability'
    """
    x = np.arange(len(tokens))
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    ax.bar(x, np.minimum(p, q), 0.8, color=COLORS["accepted"], alpha=0.6, label="overlap min(p, q)")
    ax.bar(x, p, 0.8, fill=False, edgecolor=COLORS["target"], linewidth=2.5, label="target p")
    ax.bar(x, q, 0.8, fill=False, edgecolor=COLORS["draft"], linewidth=2, linestyle="--", label="draft q")
    ax.set_xticks(x, list(tokens))
    ax.set_xlabel("token")
    ax.set_ylabel("probability")
    ax.set_ylim(0, 1.05 * max(p.max(), q.max()))
    ax.legend(frameon=False)


def plot_forward_pass_cost(
    ax: Axes, positions: Sequence[int], seconds: Sequence[float], *, gamma: int | None = None
) -> None:
    """Time of one target call against the number of positions it scores (log-log), with γ+1 marked.

    >>> import matplotlib; matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots()
    >>> plot_forward_pass_cost(ax, [1, 2, 4], [0.005, 0.005, 0.005], gamma=3)
    >>> ax.get_xlabel()
    'positions scored in one target call'
    """
    positions, ms = np.asarray(positions), 1e3 * np.asarray(seconds, dtype=float)
    ax.plot(positions, ms, color=COLORS["target"], lw=2, label="one target call")
    ax.plot(
        positions,
        ms[0] * positions,
        color=COLORS["baseline"],
        ls="--",
        label="that many plain decoding steps",
    )
    if gamma is not None:
        ax.axvline(gamma + 1, color=COLORS["accepted"], ls=":", lw=1.5, label=f"γ + 1 = {gamma + 1}")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("positions scored in one target call")
    ax.set_ylabel("time (ms)")
    ax.legend(frameon=False)


def plot_lenience(
    ax: Axes, lenience: Sequence[float], acceptance: Sequence[float], distance: Sequence[float]
) -> None:
    """Acceptance and distance from p (total variation) of the lenient rule, against the lenience l.

    >>> import matplotlib; matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots()
    >>> plot_lenience(ax, [0, 1], [1.0, 0.6], [0.4, 0.0])
    >>> ax.get_xlabel()
    'lenience l (1 = strict, 0 = accept every draft)'
    """
    ax.plot(lenience, acceptance, color=COLORS["accepted"], lw=2, label="acceptance rate")
    ax.plot(lenience, distance, color=COLORS["residual"], lw=2, label="TV(output, p)")
    ax.invert_xaxis()
    ax.set_xlabel("lenience l (1 = strict, 0 = accept every draft)")
    ax.set_ylabel("probability")
    ax.set_ylim(0, 1.02)
    ax.legend(frameon=False)
