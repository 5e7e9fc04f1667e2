"""Three explorers of the lesson: live widgets in Jupyter, a precomputed grid on the static site.

Each explorer is a few controls, each with a finite list of options, and a ``state`` function that
formats what ``specdec_lib.explorer_states`` computes for one choice of options. Displaying an
explorer gives one output with two representations:

* ``application/vnd.jupyter.widget-view+json``: ipywidgets controls; in Jupyter every move calls
  ``state`` again in the kernel (live);
* ``text/html``: the same display, plus the states of *every* combination of options as inline
  JSON. The site's ``nb_mime_priority_overrides`` prefers this representation in the HTML build,
  where ``static/explorers.js`` only looks states up (no formula in JavaScript) and
  ``static/explorers.css`` styles it (the live widget reads the same stylesheet). Both files ship
  in this package; ``sphinx_site`` adds ``static/`` to the site's static folders.

The page markup is stable for browser tests: the explorer is ``[data-explorer=NAME]``, its
controls ``[data-control=NAME]`` (the value is the option's index), the shown option
``[data-value-of=NAME]``, numbers ``[data-field=NAME]``, bars ``[data-bar=NAME]`` and rows that
may be hidden ``[data-row=NAME]``. Numbers are formatted with ``PROBABILITY``, ``RATE`` and
``MILLISECONDS``.

Accessible by design: every control has a visible ``<label for>`` (id ``EXPLORER-CONTROL``), is a
native range or select (Tab, arrows; a range also announces its shown value via ``aria-valuetext``),
and the key result sits in a polite live region (``role="status"``, ``.specdec-result``) that screen
readers announce after each move; bars are decoration (``aria-hidden``), their numbers are printed.
"""

from __future__ import annotations

import html
import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

from specdec_lib.display import vector
from specdec_lib.explorer_states import output_count_state, pq_state, timing_state
from specdec_lib.plotting import COLORS

PROBABILITY = "{:.3f}"  # probabilities, acceptance, E[K]
RATE = "{:.1f}"  # tokens per second
MILLISECONDS = "{:.2f}"  # times per round
NONE = "—"  # a quantity that is undefined in this state
TOKENS = ("A", "B", "C")
STATIC = Path(__file__).resolve().parent / "static"  # package data: explorers.css and explorers.js


@dataclass(frozen=True)
class Control:
    """One control: what the reader sees (``label``) and the finite list of ``options`` it offers."""

    name: str
    label: str
    options: tuple  # (shown text, value) pairs
    initial: int
    kind: str = "range"  # "range" (a slider) or "select" (a drop-down list)


@dataclass(frozen=True)
class Explorer:
    """An explorer: controls, a ``state`` function of the chosen values, and the markup showing a state.

    ``state`` returns ``{"v": {field: text}, "b": {bar: percent}, "h": [hidden rows]}``, or
    ``None`` for a combination that is not allowed (the page then shows ``invalid``).
    """

    name: str
    title: str
    controls: tuple[Control, ...]
    state: Callable[..., dict | None]
    display: Callable[[dict], str]
    invalid: str = ""

    def state_at(self, indices):
        """The state for one option index per control (in control order)."""
        values = {c.name: c.options[i][1] for c, i in zip(self.controls, indices)}
        return self.state(**values)

    def states(self):
        """Every reachable state, keyed by the option indices joined with "-"."""
        grid = itertools.product(*(range(len(c.options)) for c in self.controls))
        return {"-".join(map(str, ix)): self.state_at(ix) for ix in grid}

    def html(self):
        """The static explorer: controls, the initial state, all states as JSON and the lookup script."""
        initial = self.state_at([c.initial for c in self.controls])
        fields, bars = sorted(initial["v"]), sorted(initial["b"])
        data = {
            "labels": {c.name: [text for text, _ in c.options] for c in self.controls},
            "fields": fields,
            "bars": bars,  # each state as [texts, bar widths, hidden rows]
            "states": {
                k: [[s["v"][f] for f in fields], [s["b"][b] for b in bars], s["h"]]
                for k, s in self.states().items()
                if s is not None
            },
        }
        payload = json.dumps(data, sort_keys=True, separators=(",", ":")).replace("</", "<\\/")
        return (
            f'<div class="specdec-explorer" data-explorer="{self.name}">'
            f'<p class="specdec-explorer-title">{html.escape(self.title)}</p>'
            f'<div class="specdec-controls">{"".join(_control_html(self.name, c) for c in self.controls)}</div>'
            f'<div class="specdec-display">{self.display(initial)}</div>'
            f'<p class="specdec-explorer-invalid" role="alert" hidden>{html.escape(self.invalid)}</p>'
            '<p class="specdec-explorer-note">Every state of this explorer was computed by '
            "specdec_lib when the book was built; the controls switch between them. "
            "Download the notebook (button at the top of the page) to run it live with any inputs.</p>"
            f'<script type="application/json" class="specdec-states">{payload}</script></div>'
        )

    def widget(self):
        """Live ipywidgets controls; each move recomputes the state in the kernel."""
        import ipywidgets as widgets

        makers = {"range": widgets.SelectionSlider, "select": widgets.Dropdown}
        controls = [
            makers[c.kind](
                options=[(text, i) for i, (text, _) in enumerate(c.options)],
                value=c.initial,
                description=c.label,
                style={"description_width": "initial"},
            )
            for c in self.controls
        ]
        shown = widgets.HTML()

        def update(_change=None):
            state = self.state_at([w.value for w in controls])
            shown.value = _live_style() + (
                self.display(state) if state else f'<p role="alert">{html.escape(self.invalid)}</p>'
            )

        for w in controls:
            w.observe(update, names="value")
        update()
        return widgets.VBox(controls + [shown])

    def _repr_mimebundle_(self, include=None, exclude=None):
        bundle = self.widget()._repr_mimebundle_()
        bundle["text/plain"] = f"{self.title} (live in Jupyter; precomputed states on the static site)"
        bundle["text/html"] = self.html()
        return bundle


def pq_editor(targets=((0.6, 0.3, 0.1), (0.4, 0.4, 0.2), (0.2, 0.3, 0.5)), draft=(0.2, 0.3), steps=10):
    r"""The p/q editor: a(x) = min(1, p(x)/q(x)), min(p, q), r(x), the output law and α, together.

    The target p is chosen from ``targets``; the draft's q(A) and q(B) move in steps of
    ``1/steps`` and q(C) = 1 − q(A) − q(B). Computed exactly (``Fraction``), so the output
    column equals p to the last digit: :math:`\min(p,q) + (1-\alpha)\,r = p`.

    >>> editor = pq_editor()
    >>> state = editor.state_at([0, 2, 3])  # the lesson: p = [0.6, 0.3, 0.1], q = [0.2, 0.3, 0.5]
    >>> [state["v"][f] for f in ("a0", "a1", "a2", "r0", "alpha", "o0")]
    ['1.000', '1.000', '0.200', '1.000', '0.600', '0.600']
    >>> editor.state_at([0, 8, 8]) is None  # q(A) + q(B) > 1: not a distribution
    True
    """
    targets = [tuple(Fraction(v).limit_denominator(1000) for v in p) for p in targets]
    shares = tuple((f"{i / steps:g}", Fraction(i, steps)) for i in range(steps + 1))
    controls = (
        Control("target", "target p", tuple((vector(p, digits=3), p) for p in targets), 0, "select"),
        Control("qA", "draft q(A)", shares, round(draft[0] * steps)),
        Control("qB", "draft q(B)", shares, round(draft[1] * steps)),
    )
    return Explorer(
        "pq-editor",
        "p/q editor: acceptance, residual and output law",
        controls,
        _pq_state,
        _pq_display,
        invalid="q(A) + q(B) is above 1, so q is not a distribution: lower one of them.",
    )


def _pq_state(target, qA, qB):
    p, q = list(target), [qA, qB, 1 - qA - qB]
    if q[2] < 0:
        return None
    state = pq_state(p, q)
    if state.residual is None:
        note = "p = q: every proposal is accepted, so no residual is ever drawn."
    elif 0 in q:
        note = "q gives a token probability 0: the draft never proposes it, so a(x) is undefined there."
    else:
        note = ""
    columns = {
        "p": p,
        "q": q,
        "a": state.acceptance,
        "m": state.kept,
        "r": state.residual or [None] * len(p),
        "o": state.output,
    }
    v = {
        "alpha": _p(state.alpha),
        "rejected": _p(state.rejected),
        "note": note,
        "equals": "yes" if state.output == p else "no",
    }
    b = {"alpha": round(100 * float(state.alpha))}
    for key, values in columns.items():
        for i, value in enumerate(values):
            v[f"{key}{i}"] = NONE if value is None else _p(value)
            b[f"{key}{i}"] = 0 if value is None else round(100 * float(value))
    return {"v": v, "b": b, "h": []}


def _pq_display(state):
    columns = (
        ("p", "p(x)", "target"),
        ("q", "q(x)", "draft"),
        ("a", "a(x)", "accepted"),
        ("m", "min", "accepted"),
        ("r", "r(x)", "residual"),
        ("o", "output", "target"),
    )
    head = "".join(f'<th scope="col">{label}</th>' for _, label, _ in columns)
    rows = "".join(
        f'<tr><th scope="row">{token}</th>'
        + "".join(_cell(state, f"{key}{i}", colour) for key, _, colour in columns)
        + "</tr>"
        for i, token in enumerate(TOKENS)
    )
    return (
        '<p class="specdec-note">p target, q draft, a(x) acceptance, min = min(p, q) kept mass, r(x) residual, '
        f'output the emitted token\'s law.</p><div class="specdec-table"><table><tr><th scope="col">x</th>{head}</tr>'
        f"{rows}</table></div>"
        + _result(
            _bar_row(state, "alpha", "acceptance rate α", "accepted")
            + f"<p>Rejected mass 1 − α = {_field(state, 'rejected')}; output equals p: "
            f"{_field(state, 'equals')}.</p>"
        )
        + f'<p class="specdec-note">{_field(state, "note")}</p>'
    )


def alpha_gamma_explorer(gamma_max=8, alpha_steps=20):
    r"""The α–γ explorer: the truncated-geometric pmf of K and E[K] for an acceptance rate and γ.

    :math:`P(K=k) = (1-\alpha)\alpha^{k-1}` for k ≤ γ, :math:`P(K=\gamma+1)=\alpha^\gamma`,
    :math:`\mathbb{E}[K]=\sum_{j=0}^{\gamma}\alpha^j`, and the wasted proposals γ − (E[K] − 1).
    α moves in steps of ``1/alpha_steps`` (exact), γ from 1 to ``gamma_max``.

    >>> state = alpha_gamma_explorer().state_at([12, 1])  # α = 0.6, γ = 2
    >>> [state["v"][f] for f in ("K1", "K2", "K3", "EK")], state["h"][:2]
    (['0.400', '0.240', '0.360', '1.960'], ['K4', 'K5'])
    """
    controls = (
        Control(
            "alpha",
            "acceptance rate α",
            tuple((f"{k / alpha_steps:.2f}", Fraction(k, alpha_steps)) for k in range(alpha_steps + 1)),
            round(0.6 * alpha_steps),
        ),
        Control("gamma", "proposals per round γ", tuple((str(g), g) for g in range(1, gamma_max + 1)), 1),
    )

    def state(alpha, gamma):
        counted = output_count_state(alpha, gamma)
        v = {"EK": _p(counted.expected), "wasted": _p(counted.wasted)}
        b = {}
        for k in range(1, gamma_max + 2):
            value = counted.pmf[k - 1] if k <= gamma + 1 else None
            v[f"K{k}"] = NONE if value is None else _p(value)
            b[f"K{k}"] = 0 if value is None else round(100 * float(value))
        return {"v": v, "b": b, "h": [f"K{k}" for k in range(gamma + 2, gamma_max + 2)]}

    def display(state):
        bars = "".join(
            _bar_row(state, f"K{k}", f"P(K = {k})", "accepted", row=True, hidden=f"K{k}" in state["h"])
            for k in range(1, gamma_max + 2)
        )
        return bars + _result(
            f"<p>Expected output per round E[K] = {_field(state, 'EK')} tokens; "
            f"expected wasted proposals = {_field(state, 'wasted')}.</p>"
        )

    return Explorer("alpha-gamma", "α–γ explorer: how many tokens a round emits", controls, state, display)


def timing_budget_explorer(
    draft_ms_per_step=1.0,
    overhead_ms=1.0,
    baseline_ms=6.0,
    alphas=(0.4, 0.5, 0.6, 0.7, 0.8, 0.9),
    gammas=(1, 2, 3, 4),
    verify_ms=range(2, 15),
):
    r"""The timing-budget explorer: scenario rate against the baseline, and the break-even verification time.

    Rate :math:`R = \mathbb{E}[K]/(T_{draft}+T_{verify}+T_{overhead})` with
    :math:`T_{draft}` = γ × ``draft_ms_per_step``; baseline 1/``baseline_ms``; break-even
    :math:`T_{verify} = \mathbb{E}[K]\,T_{baseline} - T_{draft} - T_{overhead}`. Every time is an
    assumed budget, not a measurement.

    >>> state = timing_budget_explorer().state_at([2, 1, 4])  # α = 0.6, γ = 2, 6 ms verification
    >>> [state["v"][f] for f in ("rate", "baseline", "breakeven", "verdict")]
    ['217.8', '166.7', '8.76', 'faster than the baseline']
    >>> timing_budget_explorer().state_at([2, 1, 10])["v"]["rate"]  # 12 ms verification
    '130.7'
    """

    def budget(alpha, gamma, verify):  # the explorer's times are milliseconds, specdec_lib's seconds
        return timing_state(
            alpha, gamma, verify / 1000, draft_ms_per_step / 1000, overhead_ms / 1000, baseline_ms / 1000
        )

    controls = (
        Control("alpha", "acceptance rate α", tuple((f"{a:.1f}", a) for a in alphas), alphas.index(0.6)),
        Control("gamma", "proposals per round γ", tuple((str(g), g) for g in gammas), gammas.index(2)),
        Control(
            "verify",
            "verification per round (ms)",
            tuple((str(t), t) for t in verify_ms),
            list(verify_ms).index(6),
        ),
    )
    scale = max(budget(max(alphas), g, min(verify_ms)).rate for g in gammas)

    def state(alpha, gamma, verify):
        timed = budget(alpha, gamma, verify)
        rate, baseline = timed.rate, timed.baseline_rate
        verdict = (
            "faster than the baseline"
            if rate > baseline
            else "slower than the baseline"
            if rate < baseline
            else "level with the baseline"
        )
        v = {
            "EK": _p(timed.expected),
            "round": MILLISECONDS.format(timed.round_time * 1000),
            "rate": RATE.format(rate),
            "baseline": RATE.format(baseline),
            "ratio": f"{timed.speedup:.2f}",
            "breakeven": MILLISECONDS.format(timed.break_even * 1000)
            if timed.break_even > 0
            else "none (never pays)",
            "verdict": verdict,
        }
        return {
            "v": v,
            "b": {"rate": round(100 * rate / scale), "baseline": round(100 * baseline / scale)},
            "h": [],
        }

    def display(state):
        return (
            _result(
                _bar_row(state, "rate", "speculative (tokens/s)", "target", text="rate")
                + _bar_row(state, "baseline", "baseline (tokens/s)", "baseline", text="baseline")
                + f"<p>E[K] = {_field(state, 'EK')} tokens per round of {_field(state, 'round')} ms: "
                f"{_field(state, 'verdict')} ({_field(state, 'ratio')}×). Speculation stops paying at a "
                f"verification time of {_field(state, 'breakeven')} ms per round (break-even).</p>"
            )
            + f'<p class="specdec-note">Assumed budget: {draft_ms_per_step:g} ms per draft step, '
            f"{overhead_ms:g} ms overhead per round, {baseline_ms:g} ms per baseline token.</p>"
        )

    return Explorer(
        "timing-budget",
        "Timing-budget explorer: scenario rate against the baseline",
        controls,
        state,
        display,
    )


def _live_style() -> str:
    """The site's explorer stylesheet, for the live widget (Jupyter does not load the site's CSS)."""
    return f"<style>{(STATIC / 'explorers.css').read_text(encoding='utf-8')}</style>"


def _p(value):
    return PROBABILITY.format(float(value))


def _field(state, name):
    return f'<span data-field="{name}">{html.escape(state["v"][name])}</span>'


def _result(inner):
    """The key result of an explorer, announced by screen readers whenever a control moves."""
    return f'<div class="specdec-result" role="status" aria-live="polite" aria-atomic="true">{inner}</div>'


def _cell(state, name, colour):
    return (
        f'<td>{_field(state, name)}<span class="specdec-track" aria-hidden="true"><span data-bar="{name}" '
        f'style="width:{state["b"][name]}%;background:{COLORS[colour]}"></span></span></td>'
    )


def _bar_row(state, name, label, colour, row=False, hidden=False, text=None):
    attrs = f' data-row="{name}"' if row else ""
    attrs += " hidden" if hidden else ""
    return (
        f'<div class="specdec-bar-row"{attrs}><span class="specdec-bar-label">{label}</span>'
        f'<span class="specdec-track" aria-hidden="true"><span data-bar="{name}" style="width:{state["b"][name]}%;'
        f'background:{COLORS[colour]}"></span></span>{_field(state, text or name)}</div>'
    )


def _control_html(explorer, control):
    """A native control with a visible label tied to it by ``for``/``id`` (ids: ``EXPLORER-CONTROL``)."""
    ident = f"{explorer}-{control.name}"
    label = f'<label for="{ident}">{html.escape(control.label)}</label>'
    if control.kind == "select":
        options = "".join(
            f'<option value="{i}"{" selected" if i == control.initial else ""}>{html.escape(text)}</option>'
            for i, (text, _) in enumerate(control.options)
        )
        return f'<div class="specdec-control">{label} <select id="{ident}" data-control="{control.name}">{options}</select></div>'
    shown = html.escape(control.options[control.initial][0])
    widget = (
        f'<input type="range" id="{ident}" data-control="{control.name}" min="0" '
        f'max="{len(control.options) - 1}" step="1" value="{control.initial}" aria-valuetext="{shown}">'
    )
    return (
        f'<div class="specdec-control">{label} {widget} '
        f'<output for="{ident}" data-value-of="{control.name}" aria-hidden="true">{shown}</output></div>'
    )
