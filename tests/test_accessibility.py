"""Accessibility without a browser: the palette, the figures' descriptions, the explorers' markup.

The browser half (axe-core on every page in light and dark mode at 1280 and 390 px, keyboard use of
the explorers) is in ``test_site_browser.py``; its report is ``_build/screenshots/axe-report.json``.
"""

import itertools
import re

import numpy as np
import pytest
from bs4 import BeautifulSoup

from specdec_course.explorers import alpha_gamma_explorer, pq_editor, timing_budget_explorer
from specdec_course.sphinx_site import describe_images
from specdec_lib.plotting import COLORS, DescribedFigure

MATPLOTLIB_TAB10 = {
    "target": "#1f77b4",
    "draft": "#ff7f0e",
    "accepted": "#2ca02c",
    "residual": "#d62728",
    "baseline": "#7f7f7f",
    "measured": "#9467bd",
}  # the palette before; a negative control

# Machado, Oliveira & Fernandes (2009), severity 1, applied to linear RGB.
DEFICIENCIES = {
    "protanopia": [
        [0.152286, 1.052583, -0.204868],
        [0.114503, 0.786281, 0.099216],
        [-0.003882, -0.048116, 1.051998],
    ],
    "deuteranopia": [
        [0.367322, 0.860646, -0.227968],
        [0.280085, 0.672501, 0.047413],
        [-0.011820, 0.042940, 0.968881],
    ],
    "tritanopia": [
        [1.255528, -0.076749, -0.178779],
        [-0.078411, 0.930809, 0.147602],
        [0.004733, 0.691367, 0.303900],
    ],
}
MIN_DISTANCE = 20.0  # CIELAB ΔE*ab: 2.3 is a just-noticeable difference; 20 tells bars apart at a glance


def _linear_rgb(colour):
    srgb = np.array([int(colour[i : i + 2], 16) for i in (1, 3, 5)]) / 255
    return np.where(srgb <= 0.04045, srgb / 12.92, ((srgb + 0.055) / 1.055) ** 2.4)


def _cielab(linear):
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]) @ linear
    t = xyz / np.array([0.95047, 1.0, 1.08883])  # D65 white
    f = np.where(t > (6 / 29) ** 3, np.cbrt(t), t / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def closest_pairs(palette):
    """For normal vision and each deficiency: (ΔE*ab, colour a, colour b) of the two closest colours."""
    worst = {}
    for vision, matrix in {"normal": np.eye(3), **DEFICIENCIES}.items():
        lab = {
            name: _cielab(np.clip(np.asarray(matrix) @ _linear_rgb(c), 0, 1)) for name, c in palette.items()
        }
        worst[vision] = min(
            (float(np.linalg.norm(lab[a] - lab[b])), a, b) for a, b in itertools.combinations(palette, 2)
        )
    return worst


def contrast_on_white(colour):
    """WCAG contrast ratio of a colour against white."""
    luminance = float(_linear_rgb(colour) @ [0.2126, 0.7152, 0.0722])
    return 1.05 / (luminance + 0.05)


def test_palette_stays_apart_under_colour_vision_deficiencies():
    too_close = {v: pair for v, pair in closest_pairs(COLORS).items() if pair[0] < MIN_DISTANCE}
    assert not too_close, f"colours too close (ΔE*ab < {MIN_DISTANCE}): {too_close}"


def test_palette_check_rejects_matplotlib_default_colours():
    """Negative control: tab10's green and red (and orange) merge for protanopes and deuteranopes."""
    worst = closest_pairs(MATPLOTLIB_TAB10)
    assert worst["deuteranopia"][0] < MIN_DISTANCE and worst["protanopia"][0] < MIN_DISTANCE


def test_palette_has_3_to_1_contrast_on_the_white_figure_background():
    """WCAG 1.4.11 for graphics; figures and explorers keep a white background in both modes."""
    low = {name: round(contrast_on_white(c), 2) for name, c in COLORS.items() if contrast_on_white(c) < 3}
    assert not low
    assert contrast_on_white(MATPLOTLIB_TAB10["draft"]) < 3  # negative control: tab10 orange is 2.5:1


FILE_NAME = re.compile(r"(\.(png|jpe?g|svg|gif|webp)\b)|(^|/)[0-9a-f]{16,}|^_images/|^\.\./", re.I)


def undescribed(img):
    """Why an ``<img>`` tells a screen-reader user nothing (empty alt, or a file name or hash), or None."""
    alt = (img.get("alt") or "").strip()
    if not alt:
        return "no alt text"
    if alt == img.get("src") or FILE_NAME.search(alt):
        return f"alt is a file name: {alt[:60]}"
    if len(alt.split()) < 4:
        return f"alt too short to say what the figure shows: {alt!r}"
    return None


def test_alt_check_flags_file_names_and_accepts_a_message():
    html = (
        '<img alt="../_images/8e64a4a11404d58da769226c1432e0d559c13c41304b269a22a04a5da6078467.png" src="x.png">'
        '<img src="y.png"><img alt="Acceptance falls from 0.87 at position 1 to 0.55 at position 8" src="z.png">'
    )
    images = BeautifulSoup(html, "html.parser").find_all("img")
    assert [undescribed(i) is None for i in images] == [False, False, True]


def test_every_image_says_what_it_shows(built_site, site_page):
    """Figures come from ``DescribedFigure(fig, alt)``; the build copies the description into ``alt``."""
    soup = BeautifulSoup((built_site / site_page).read_text(encoding="utf-8"), "html.parser")
    article = soup.find("article") or soup
    problems = [f"{img.get('src')}: {why}" for img in article.find_all("img") if (why := undescribed(img))]
    assert not problems, f"{site_page}: figures without a description: {problems}"


def _figures_standing_alone(soup):
    """Output figures with no prose right before or after their cell, and no caption."""
    alone = []
    for img in soup.select("div.cell_output img"):
        cell = img.find_parent("div", class_="cell")
        if img.find_parent("figure") and img.find_parent("figure").find("figcaption"):
            continue
        neighbours = [cell.find_previous_sibling(True), cell.find_next_sibling(True)]
        if not any(n is not None and n.name in ("p", "ul", "ol", "dl", "blockquote") for n in neighbours):
            alone.append(img.get("src"))
    return alone


def test_caption_check_flags_a_figure_between_two_figures():
    cell = '<div class="cell"><div class="cell_output"><img src="{}" alt="a"></div></div>'
    soup = BeautifulSoup(
        "<section><p>text</p>"
        + cell.format("a")
        + cell.format("b")
        + cell.format("c")
        + "<p>more</p></section>",
        "html.parser",
    )
    assert _figures_standing_alone(soup) == ["b"]


def test_a_figure_without_prose_next_to_it_has_a_caption(built_site, chapter_page):
    soup = BeautifulSoup((built_site / chapter_page).read_text(encoding="utf-8"), "html.parser")
    assert _figures_standing_alone(soup) == [], (
        f"{chapter_page}: figures with neither prose around them nor a caption"
    )


def test_build_copies_the_figure_description_into_the_alt_text(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from docutils import nodes

    alt = "Acceptance α falls from 0.87 at position 1 to 0.55 at position 8"
    (tmp_path / "fig.png").write_bytes(DescribedFigure(plt.figure(), alt)._repr_png_())
    plt.figure().savefig(tmp_path / "plain.png")
    described, plain, written = (nodes.image(uri=name) for name in ("fig.png", "plain.png", "fig.png"))
    written["alt"] = "an author's own alt text"
    doctree = nodes.section("", described, plain, written)

    class App:
        srcdir = tmp_path

    describe_images(App, doctree, "page")
    assert (described.get("alt"), plain.get("alt"), written["alt"]) == (alt, None, "an author's own alt text")


@pytest.mark.parametrize("make", [pq_editor, alpha_gamma_explorer, timing_budget_explorer])
def test_explorer_controls_have_visible_labels_and_a_live_result(make):
    explorer = make()
    soup = BeautifulSoup(explorer.html(), "html.parser")
    for control in explorer.controls:
        element = soup.find(attrs={"data-control": control.name})
        label = soup.find("label", attrs={"for": element["id"]})
        assert label is not None and label.get_text(strip=True) == control.label
        assert element.name in ("input", "select")  # native: Tab and the arrow keys work everywhere
        if element.name == "input":
            assert element["aria-valuetext"] == control.options[control.initial][0]
    live = soup.select(".specdec-display [aria-live]")
    assert len(live) == 1 and live[0]["aria-live"] == "polite" and live[0]["role"] == "status"
    assert live[0].find(attrs={"data-field": True}) is not None
    assert all(track.get("aria-hidden") == "true" for track in soup.select(".specdec-track"))


@pytest.mark.parametrize("make", [pq_editor, alpha_gamma_explorer, timing_budget_explorer])
def test_live_widget_labels_every_control_and_marks_its_result_live(make):
    explorer = make()
    *controls, shown = explorer.widget().children
    assert [w.description for w in controls] == [c.label for c in explorer.controls]
    assert 'role="status"' in shown.value and 'aria-live="polite"' in shown.value
