"""Self-contained "check your understanding" questions: plain HTML, no JavaScript, no network.

Each option and the answer are HTML ``<details>`` elements, so a reader reveals them by
clicking, in JupyterLab and on the static site alike. Stable CSS classes for tests and themes:
``quiz`` (the card), ``quiz-option`` (an option, click to check it), ``quiz-feedback``,
``quiz-reveal`` (the control that reveals the answer) and ``quiz-answer`` (answer and reasoning).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from html import escape


@dataclass(frozen=True)
class Question:
    """One multiple-choice question; displays itself as an interactive card in Jupyter and on the site.

    ``answer`` is the index of the correct option; ``reasoning`` explains it.

    >>> q = Question("Is a proposal output?", ("Yes", "No"), answer=1, reasoning="Only verified tokens are.")
    >>> print(q)
    Is a proposal output?
      A. Yes
      B. No
    >>> 'class="quiz-reveal"' in q._repr_html_()
    True
    >>> Question("?", ("Yes", "Yes"), answer=0, reasoning="")
    Traceback (most recent call last):
    ...
    ValueError: options: must be at least two distinct choices, got ('Yes', 'Yes')
    """

    prompt: str
    options: tuple[str, ...]
    answer: int
    reasoning: str

    def __post_init__(self):
        if len(set(self.options)) != len(self.options) or len(self.options) < 2:
            raise ValueError(f"options: must be at least two distinct choices, got {self.options!r}")
        if not 0 <= self.answer < len(self.options):
            raise ValueError(f"answer: index {self.answer} outside 0..{len(self.options) - 1}")

    @classmethod
    def shuffled(cls, prompt, correct, wrong, reasoning, seed):
        """A question whose options (the correct one and the ``wrong`` ones) are put in an order drawn from ``seed``.

        The order is deterministic (``random.Random(seed)``), so the page is the same on every build,
        and different seeds spread the correct answer over the positions.

        >>> q = Question.shuffled("Is a proposal output?", "No", ["Yes", "Sometimes"], "Only verified tokens are.", seed=3)
        >>> q.options[q.answer]
        'No'
        >>> q == Question.shuffled("Is a proposal output?", "No", ["Yes", "Sometimes"], "Only verified tokens are.", seed=3)
        True
        """
        options = [correct, *wrong]
        random.Random(seed).shuffle(options)
        return cls(prompt, tuple(options), options.index(correct), reasoning)

    def __str__(self) -> str:
        lines = [self.prompt] + [f"  {_letter(i)}. {text}" for i, text in enumerate(self.options)]
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        options = "".join(
            f'<details class="quiz-option" style="margin:0.2em 0">'
            f"<summary>{_letter(i)}. {escape(text)}</summary>"
            f'<div class="quiz-feedback" style="margin-left:1.5em"><em>'
            f"{'Correct.' if i == self.answer else 'Not this one.'}</em></div></details>"
            for i, text in enumerate(self.options)
        )
        correct = f"{_letter(self.answer)}. {escape(self.options[self.answer])}"
        return (
            '<div class="quiz" style="border:1px solid #8888;border-radius:0.4em;padding:0.6em 0.9em;margin:0.5em 0">'
            f'<p style="margin-top:0"><strong>{escape(self.prompt)}</strong></p>'
            f"{options}"
            '<details class="quiz-details" style="margin-top:0.5em">'
            '<summary class="quiz-reveal" style="cursor:pointer">Answer and reasoning</summary>'
            f'<div class="quiz-answer" style="margin-left:1.5em"><p><strong>{correct}</strong></p>'
            f"<p>{escape(self.reasoning)}</p></div></details></div>"
        )


def _letter(index: int) -> str:
    return chr(ord("A") + index)
