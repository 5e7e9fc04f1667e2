"""The explorers without a browser: live widgets recompute, the static page carries every state."""

import json
import re
from fractions import Fraction as F
from pathlib import Path

import pytest
import yaml

import specdec_lib as sd
from specdec_course.explorers import (
    PROBABILITY,
    RATE,
    alpha_gamma_explorer,
    pq_editor,
    timing_budget_explorer,
)

EXPLORERS = [pq_editor, alpha_gamma_explorer, timing_budget_explorer]


def embedded(explorer):
    payload = re.search(
        r'<script type="application/json" class="specdec-states">(.*?)</script>', explorer.html(), re.S
    )
    return json.loads(payload.group(1).replace("<\\/", "</"))


@pytest.mark.parametrize("make", EXPLORERS)
def test_static_page_embeds_every_reachable_state(make):
    explorer = make()
    data = embedded(explorer)
    reachable = [k for k, s in explorer.states().items() if s is not None]
    assert sorted(data["states"]) == sorted(reachable)
    assert all(len(texts) == len(data["fields"]) for texts, _, _ in data["states"].values())


@pytest.mark.parametrize("make", EXPLORERS)
def test_static_html_is_deterministic_for_nbval(make):
    assert make().html() == make().html()


def test_static_state_matches_specdec_lib():
    data = embedded(alpha_gamma_explorer())
    state = data["states"]["16-3"]  # α = 16/20, γ = 4
    shown = dict(zip(data["fields"], state[0]))
    assert shown["EK"] == PROBABILITY.format(float(sd.expected_output_count(F(4, 5), 4)))
    assert shown["K5"] == PROBABILITY.format(float(F(4, 5) ** 4))


def test_live_widget_recomputes_when_a_control_moves():
    box = timing_budget_explorer().widget()
    *controls, shown = box.children
    assert "217.8" in shown.value  # the lesson's budget: α = 0.6, γ = 2, 6 ms verification
    controls[2].value = controls[2].options[10][1]  # 12 ms verification
    assert RATE.format(sd.scenario_rate(sd.expected_output_count(0.6, 2), 0.002, 0.012, 0.001)) in shown.value
    assert "217.8" not in shown.value


def test_live_pq_editor_says_when_q_is_not_a_distribution():
    box = pq_editor().widget()
    target, q_a, q_b, shown = box.children
    q_a.value, q_b.value = 8, 8
    assert "not a distribution" in shown.value


def test_explorer_output_prefers_static_html_on_the_site():
    bundle = pq_editor()._repr_mimebundle_()
    assert {"text/html", "text/plain", "application/vnd.jupyter.widget-view+json"} <= set(bundle)
    config = yaml.safe_load((Path(__file__).resolve().parent.parent / "_config.yml").read_text())
    overrides = config["sphinx"]["config"]["nb_mime_priority_overrides"]
    assert ["html", "application/vnd.jupyter.widget-view+json", 35] in overrides  # after text/html (30)
