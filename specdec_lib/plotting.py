"""One look for every figure in the course: the same colour always means the same quantity.

p (target), q (draft), min(p, q) (accepted mass) and the residual keep their colours on
every page. Figures keep a white background so they read the same in light and dark themes.
"""

from __future__ import annotations

import numpy as np

COLORS = {
    "target": "#1f77b4",     # p
    "draft": "#ff7f0e",      # q
    "accepted": "#2ca02c",   # min(p, q)
    "residual": "#d62728",   # r = [p - q]+ normalised
    "baseline": "#7f7f7f",   # plain autoregressive decoding
    "measured": "#9467bd",   # anything timed on the build machine
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
