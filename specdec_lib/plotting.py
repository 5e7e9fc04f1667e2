"""One look for every figure in the course: the same colour always means the same quantity.

p (target), q (draft), min(p, q) (accepted mass) and the residual keep their colours on
every page. Figures keep a white background so they read the same in light and dark themes.
The palette stays apart under protanopia, deuteranopia and tritanopia (CIELAB distance ≥ 20
between any two colours after simulating each, Machado et al. 2009) and each colour has at least
3:1 contrast on white (WCAG 1.4.11); ``tests/test_accessibility.py`` checks both. Colour is never
the only cue: label the series (legend, direct labels) or vary markers and hatching too.
"""

from __future__ import annotations

import numpy as np

COLORS = {
    "target": "#163f8f",     # p (dark blue)
    "draft": "#c0840f",      # q (ochre)
    "accepted": "#1a9f5c",   # min(p, q) (green)
    "residual": "#a8170f",   # r = [p - q]+ normalised (dark red)
    "baseline": "#6b6b6b",   # plain autoregressive decoding (grey)
    "measured": "#9a32e6",   # anything timed on the build machine (violet)
}


def bar_distributions(ax, tokens, series, *, title=None):
    """Grouped bars of several distributions over the same tokens.

    ``series`` maps a label to (colour key or colour, probability vector).

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
        ax.bar(x + (i - (len(series) - 1) / 2) * width, np.asarray(values, dtype=float), width,
               label=label, color=COLORS.get(colour, colour))
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

    def __init__(self, fig, alt: str):
        if not isinstance(alt, str) or not alt.strip():
            raise ValueError("alt: describe what the figure shows in words (an empty alt text hides it from screen readers)")
        import matplotlib.pyplot as plt

        self.alt = " ".join(alt.split())
        self._png = _png_bytes(fig, self.alt)
        plt.close(fig)

    def _repr_png_(self) -> bytes:
        return self._png

    def __repr__(self) -> str:
        return f"Figure: {self.alt}"


def _png_bytes(fig, alt: str) -> bytes:
    import io

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100, bbox_inches="tight", metadata={"Description": alt})
    return buffer.getvalue()
