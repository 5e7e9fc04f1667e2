"""The built site in a real browser: Debian's Chromium, driven by Playwright, offline.

Serves the built site (the ``built_site`` fixture) on 127.0.0.1 and checks, for every page: no console
errors, math rendered by MathJax (no TeX errors, no raw ``\\(``), every image loaded, no request
leaving 127.0.0.1. For the chapters: the lesson's key numbers are visible, each explorer shows
the numbers ``specdec_lib`` gives after a control is moved, the quiz reveals its answers, the
site search finds chapters, and nothing overflows a 390 px phone screen. Screenshots of every
chapter (1280 and 390 px wide, light and dark) go to ``_build/screenshots/`` with a JSON report.

Accessibility: axe-core (pinned in package-lock.json, vendored into ``tests/vendor/`` by ``make
vendor``, injected here; no page of the site loads it) checks every page in those four modes and
fails on any critical or serious violation; all violations, by rule and impact, are written to
``_build/screenshots/axe-report.json``. The explorers are driven by the keyboard alone and must
announce each new result through their live region.

Without Chromium or Playwright the tests are skipped with the reason; with
``SPECDEC_REQUIRE_BROWSER=1`` (CI) that is a failure instead.
"""

import collections
import functools
import http.server
import json
import re
import threading
from fractions import Fraction as F
from urllib.parse import urlsplit

import pytest
from browser_support import chromium_unavailable, launched_chromium, opener, skip_or_fail
from conftest import ROOT, site_pages

import specdec_lib as sd
from specdec_course.explorers import (
    MILLISECONDS,
    NONE,
    PROBABILITY,
    RATE,
    alpha_gamma_explorer,
    pq_editor,
    timing_budget_explorer,
)

CHAPTERS = ["book/intro", *re.findall(r"file:\s*(\S+)", (ROOT / "_toc.yml").read_text())]
REPORT = {}  # page -> what was checked there; written next to the screenshots
ALL_REQUESTS = []  # every request of every visit in this module
AXE = ROOT / "tests" / "vendor" / "axe-core" / "axe.min.js"
AXE_RESULTS = {}  # page -> mode -> violations
MODES = [(width, scheme) for width in (1280, 390) for scheme in ("light", "dark")]


def _unavailable():
    if reason := chromium_unavailable():
        return reason
    if not AXE.is_file():
        return f"no axe-core at {AXE} (make vendor)"
    return None


@pytest.fixture(scope="module")
def site(built_site, shots):
    """Base URL of the built site, served on 127.0.0.1 by a threaded http.server."""
    skip_or_fail("browser tests", _unavailable())

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Quiet, directory=str(built_site))
    )
    serving = threading.Thread(target=server.serve_forever, daemon=True)
    serving.start()
    yield f"http://127.0.0.1:{server.server_port}/"
    server.shutdown()
    serving.join()
    server.server_close()  # shutdown() only stops the loop; the listening socket stays open until this
    REPORT["all visits"] = {
        "requests": len(ALL_REQUESTS),
        "remote": [
            u
            for u in ALL_REQUESTS
            if urlsplit(u).hostname != "127.0.0.1" and not u.startswith(("data:", "blob:"))
        ],
    }
    (shots / "browser-report.json").write_text(json.dumps(REPORT, indent=1, sort_keys=True))
    if AXE_RESULTS:
        (shots / "axe-report.json").write_text(json.dumps(axe_report(AXE_RESULTS), indent=1, sort_keys=True))


def axe_report(results):
    """Violations counted by impact and by rule (one count per page and mode), then listed in full."""
    by_impact, by_rule = collections.Counter(), {}
    for modes in results.values():
        for violations in modes.values():
            for v in violations:
                by_impact[v["impact"]] += 1
                rule = by_rule.setdefault(
                    v["id"], {"impact": v["impact"], "help": v["help"], "count": 0, "nodes": 0}
                )
                rule["count"] += 1
                rule["nodes"] += len(v["nodes"])
    return {
        "axe-core": json.loads((ROOT / "package.json").read_text())["dependencies"]["axe-core"],
        "pages": sorted(results),
        "modes": [f"{w} px {s}" for w, s in MODES],
        "by impact": dict(by_impact),
        "by rule": by_rule,
        "violations": results,
    }


@pytest.fixture(scope="module")
def browser(site):
    yield from launched_chromium()


@pytest.fixture(scope="module")
def shots(built_site):
    """The screenshots' folder, next to the built site."""
    folder = built_site.parent / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.png"):  # this module's own; other suites keep theirs in subfolders
        old.unlink()
    return folder


class Visit:
    """One page in a fresh browser context, recording requests and console errors."""

    def __init__(self, browser, site, path):
        self.site, self.requests, self.errors = site, [], []
        self.context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme="light")
        self.context.route("**/*", self._route)
        self.page = self.context.new_page()
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.goto(site + path, wait_until="load")
        if path == "index.html":  # the root page only redirects to the first chapter
            self.page.wait_for_url("**/book/intro.html", wait_until="load")
        self.page.evaluate("() => window.MathJax && MathJax.startup ? MathJax.startup.promise : null")

    def _route(self, route):
        self.requests.append(route.request.url)
        ALL_REQUESTS.append(route.request.url)
        if urlsplit(route.request.url).hostname == "127.0.0.1" or route.request.url.startswith(
            ("data:", "blob:")
        ):
            route.continue_()
        else:
            route.abort()  # never let the test itself leak a request; it is reported below

    def remote_requests(self):
        return [
            u
            for u in self.requests
            if urlsplit(u).hostname != "127.0.0.1" and not u.startswith(("data:", "blob:"))
        ]

    def text_outside_explorers(self):
        return self.page.evaluate("""() => {
            const hidden = [...document.querySelectorAll('.specdec-explorer')];
            hidden.forEach(e => e.style.display = 'none');
            const text = document.querySelector('article, main').innerText;
            hidden.forEach(e => e.style.display = '');
            return text; }""")

    def close(self):
        self.context.close()


@pytest.fixture
def visit(browser, site):
    yield from opener(lambda path: Visit(browser, site, path))


RAW_TEX = """() => {
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const raw = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (n.parentElement.closest('pre, code, script, style, textarea, mjx-container, .highlight')) continue;
    if (/\\\\[(\\[]/.test(n.textContent)) raw.push(n.textContent.trim().slice(0, 60));
  }
  return raw; }"""

BROKEN_IMAGES = """async () => {
  const images = [...document.images];
  images.forEach(i => i.loading = 'eager');
  await Promise.all(images.map(i => i.decode().catch(() => null)));
  return images.filter(i => !i.complete || i.naturalWidth === 0).map(i => i.getAttribute('src')); }"""


def test_page_loads_offline_with_math_and_images(visit, built_site, site_page):
    path = site_page
    v = visit(path)
    page = v.page
    broken_images = page.evaluate(BROKEN_IMAGES)
    page.wait_for_load_state("networkidle")  # late requests (fonts, lazy images) are counted too
    math_nodes = page.locator("span.math, div.math").count()
    rendered = page.locator("mjx-container").count()
    REPORT.setdefault(path, {}).update(
        requests=len(v.requests),
        remote_requests=v.remote_requests(),
        math=rendered,
        images=page.evaluate("() => document.images.length"),
    )
    assert not v.remote_requests(), f"{path} asked other origins: {v.remote_requests()}"
    assert not v.errors, f"console errors on {path}: {v.errors}"
    if math_nodes:
        assert rendered >= math_nodes, f"{path}: {math_nodes} math nodes, {rendered} rendered by MathJax"
    assert page.locator("mjx-merror").count() == 0, f"{path}: MathJax reports TeX errors"
    assert page.evaluate(RAW_TEX) == [], f"{path}: raw TeX left in the page"
    assert broken_images == [], f"{path}: images that did not load"


def shown(value, decimals):
    """A regex for ``value`` printed with ``decimals`` decimals (trailing zeros optional)."""
    text = f"{value:.{decimals}f}".rstrip("0").rstrip(".")
    return re.compile(rf"(?<![\d.]){re.escape(text)}0*(?![\d])")


def _lesson_numbers():
    p, q = [0.6, 0.3, 0.1], [0.2, 0.3, 0.5]
    alpha = sd.acceptance_rate(p, q)
    ek = sd.expected_output_count(alpha, 2)
    pmf = sd.output_count_pmf(alpha, 2)
    rate = sd.scenario_rate(ek, 0.002, 0.006, 0.001)
    return {
        "book/acceptance": [(alpha, 2)],
        "book/output_count": [(pmf[0], 2), (pmf[1], 2), (pmf[2], 2), (ek, 2)],
        "book/engineering_example": [
            (alpha, 2),
            (ek, 2),
            (rate, 1),
            (sd.scenario_rate(1, 0, 0.006), 1),
            (sd.scenario_rate(ek, 0.002, 0.012, 0.001), 1),
        ],
    }


@pytest.mark.parametrize("chapter, numbers", _lesson_numbers().items())
def test_lesson_key_numbers_are_visible(visit, chapter, numbers):
    text = visit(f"{chapter}.html").text_outside_explorers()
    missing = [f"{v:.{d}f}" for v, d in numbers if not shown(v, d).search(text)]
    REPORT.setdefault(f"{chapter}.html", {})["key_numbers"] = [f"{v:.{d}f}" for v, d in numbers]
    assert not missing, f"{chapter}: key numbers not visible in the prose: {missing}"


def _explorer_page(html, name):
    for path in site_pages(html):
        if f'data-explorer="{name}"' in (html / path).read_text(encoding="utf-8"):
            return path
    pytest.fail(f"no page carries the {name} explorer")


def _move(explorer, settings):
    for control, index in settings.items():
        element = explorer.locator(f'[data-control="{control}"]')
        if element.evaluate("e => e.tagName") == "SELECT":
            element.select_option(str(index))
        else:
            element.fill(str(index))


def _check_fields(explorer, expected):
    got = {name: explorer.locator(f'[data-field="{name}"]').inner_text() for name in expected}
    assert got == expected
    return len(expected)


def _p(value):
    return PROBABILITY.format(float(value))


def test_pq_editor_shows_specdec_lib_values_for_every_move(visit, built_site):
    path = _explorer_page(built_site, "pq-editor")
    explorer = visit(path).page.locator('[data-explorer="pq-editor"]')
    checked = 0
    for target, p, qa, qb in [
        (0, [F(3, 5), F(3, 10), F(1, 10)], 2, 3),
        (1, [F(2, 5), F(2, 5), F(1, 5)], 5, 1),
    ]:
        q = [F(qa, 10), F(qb, 10), 1 - F(qa + qb, 10)]
        _move(explorer, {"target": target, "qA": qa, "qB": qb})
        alpha, accept = sd.acceptance_rate(p, q), sd.acceptance_probabilities(p, q)
        residual, output = sd.residual_distribution(p, q), sd.output_distribution(p, q)
        expected = {"alpha": _p(alpha), "rejected": _p(1 - alpha), "equals": "yes" if output == p else "no"}
        for i in range(3):
            expected.update(
                {
                    f"p{i}": _p(p[i]),
                    f"q{i}": _p(q[i]),
                    f"a{i}": _p(accept[i]),
                    f"m{i}": _p(min(p[i], q[i])),
                    f"r{i}": _p(residual[i]),
                    f"o{i}": _p(output[i]),
                }
            )
        checked += _check_fields(explorer, expected)
        width = explorer.locator('[data-bar="a2"]').evaluate("e => e.style.width")
        assert width == f"{round(100 * float(accept[2]))}%"
    _move(explorer, {"target": 2, "qA": 2, "qB": 3})  # p = q: nothing is ever rejected
    checked += _check_fields(explorer, {"alpha": _p(1), "r0": NONE, "equals": "yes"})
    _move(explorer, {"qA": 8, "qB": 5})  # q(A) + q(B) > 1
    assert explorer.locator(".specdec-explorer-invalid").is_visible()
    assert not explorer.locator(".specdec-display").is_visible()
    REPORT.setdefault(path, {})["pq-editor values checked"] = checked


def test_alpha_gamma_explorer_shows_the_pmf_of_K(visit, built_site):
    path = _explorer_page(built_site, "alpha-gamma")
    explorer = visit(path).page.locator('[data-explorer="alpha-gamma"]')
    checked = 0
    for alpha_index, gamma in [(12, 2), (16, 4), (20, 1)]:
        alpha = F(alpha_index, 20)
        _move(explorer, {"alpha": alpha_index, "gamma": gamma - 1})
        assert explorer.locator('[data-value-of="alpha"]').inner_text() == f"{float(alpha):.2f}"
        pmf = sd.output_count_pmf(alpha, gamma)
        expected = {f"K{k}": _p(v) for k, v in enumerate(pmf, 1)}
        expected.update(
            EK=_p(sd.expected_output_count(alpha, gamma)),
            wasted=_p(sd.expected_wasted_proposals(alpha, gamma)),
        )
        checked += _check_fields(explorer, expected)
        assert explorer.locator(f'[data-row="K{gamma + 1}"]').is_visible()
        assert not explorer.locator(f'[data-row="K{gamma + 2}"]').is_visible()
    REPORT.setdefault(path, {})["alpha-gamma values checked"] = checked


def test_timing_budget_explorer_shows_rate_baseline_and_break_even(visit, built_site):
    path = _explorer_page(built_site, "timing-budget")
    explorer = visit(path).page.locator('[data-explorer="timing-budget"]')
    checked = 0
    alphas, gammas, verify = (0.4, 0.5, 0.6, 0.7, 0.8, 0.9), (1, 2, 3, 4), list(range(2, 15))
    for alpha, gamma, t_verify in [(0.6, 2, 12), (0.8, 3, 9), (0.4, 4, 14)]:
        _move(
            explorer,
            {"alpha": alphas.index(alpha), "gamma": gammas.index(gamma), "verify": verify.index(t_verify)},
        )
        tokens = sd.expected_output_count(alpha, gamma)
        rate = sd.scenario_rate(tokens, gamma / 1000, t_verify / 1000, 0.001)
        baseline = sd.scenario_rate(1, 0, 0.006)
        even = sd.break_even_verify_time(tokens, gamma / 1000, 0.001, 0.006)
        checked += _check_fields(
            explorer,
            {
                "EK": _p(tokens),
                "rate": RATE.format(rate),
                "baseline": RATE.format(baseline),
                "breakeven": MILLISECONDS.format(even * 1000) if even > 0 else "none (never pays)",
            },
        )
    REPORT.setdefault(path, {})["timing-budget values checked"] = checked


@pytest.mark.parametrize("make", [pq_editor, alpha_gamma_explorer, timing_budget_explorer])
def test_explorer_works_by_keyboard_alone_and_announces_each_result(visit, built_site, make):
    """Tab reaches each labelled control with a visible focus ring; an arrow key moves it; the live region
    (role=status, aria-live=polite) then holds what specdec_lib computes for the new inputs."""
    explorer = make()
    path = _explorer_page(built_site, explorer.name)
    page = visit(path).page
    root = page.locator(f'[data-explorer="{explorer.name}"]')
    live = root.locator(".specdec-result")
    assert (live.get_attribute("role"), live.get_attribute("aria-live")) == ("status", "polite")
    root.locator(".specdec-explorer-title").click()  # where a reader starts: Tab goes on from here
    indices, moved = [c.initial for c in explorer.controls], 0
    for i, control in enumerate(explorer.controls):
        page.keyboard.press("Tab")
        element = root.get_by_label(control.label, exact=True)  # the visible <label for> names the control
        assert element.evaluate("e => e === document.activeElement"), f"Tab does not reach {control.label!r}"
        style, width = element.evaluate(
            "e => [getComputedStyle(e).outlineStyle, parseFloat(getComputedStyle(e).outlineWidth)]"
        )
        assert style != "none" and width >= 2, f"{control.label!r} shows no focus ring"
        step = 1 if indices[i] + 1 < len(control.options) else -1
        candidate = indices[:i] + [indices[i] + step] + indices[i + 1 :]
        if explorer.state_at(candidate) is None:
            continue  # a combination the explorer refuses (q(A) + q(B) > 1)
        page.keyboard.press(
            {
                ("range", 1): "ArrowRight",
                ("range", -1): "ArrowLeft",
                ("select", 1): "ArrowDown",
                ("select", -1): "ArrowUp",
            }[control.kind, step]
        )
        indices, moved = candidate, moved + 1
        state = explorer.state_at(indices)["v"]
        announced = {
            f: live.locator(f'[data-field="{f}"]').inner_text()
            for f in live.locator("[data-field]").evaluate_all("els => els.map(e => e.dataset.field)")
        }
        assert announced and announced == {f: state[f] for f in announced}
        if control.kind == "range":
            assert element.get_attribute("aria-valuetext") == control.options[indices[i]][0]
    assert moved >= len(explorer.controls) - 1
    REPORT.setdefault(path, {})[f"{explorer.name} keyboard moves"] = moved


def test_quiz_reveals_answers(visit):
    page = visit("book/quiz.html").page
    cards = page.locator(".quiz")
    revealed = 0
    for i in range(cards.count()):
        card = cards.nth(i)
        if not card.is_visible():  # e.g. a question inside a collapsed solution
            continue
        revealed += 1
        answer = card.locator(".quiz-answer")
        assert not answer.is_visible(), f"question {i + 1} shows its answer before it is asked for"
        card.locator(".quiz-reveal").click()
        assert answer.is_visible() and answer.inner_text().strip(), f"question {i + 1} reveals no answer"
        card.locator(".quiz-option summary").first.click()
        assert card.locator(".quiz-feedback").first.is_visible()
    expected_k = f"{round(sd.expected_output_count(0.6, 2), 2):g}"
    ek_card = cards.filter(has_text="E[K]").first
    assert expected_k in ek_card.locator(".quiz-answer").inner_text()
    assert revealed >= 9, "the quiz needs the lesson's three questions and at least six more"
    REPORT.setdefault("book/quiz.html", {})["quiz answers revealed"] = revealed


def test_search_finds_the_chapters(visit):
    page = visit("search.html?q=residual").page
    page.wait_for_selector("ul.search li", timeout=10_000)
    hits = page.locator("ul.search li").count()
    REPORT.setdefault("search.html", {})["hits for 'residual'"] = hits
    assert hits >= 1


AXE_RUN = """async () => (await axe.run(document, {resultTypes: ["violations"]})).violations.map(v => ({
  id: v.id, impact: v.impact, help: v.help,
  nodes: v.nodes.map(n => ({target: n.target.join(" "), html: n.html.slice(0, 160), why: n.failureSummary}))}))"""


def test_page_is_accessible_in_light_and_dark_at_desktop_and_phone_width(
    visit, shots, built_site, content_page
):
    """axe-core in each mode; chapters must not scroll sideways and leave a screenshot of each mode."""
    path = content_page
    page = visit(path).page
    page.add_script_tag(path=str(AXE))
    chapter = path[: -len(".html")] in CHAPTERS
    for width, scheme in MODES:
        page.set_viewport_size({"width": width, "height": 900})
        page.emulate_media(color_scheme=scheme)
        page.wait_for_function(f"() => document.documentElement.dataset.theme === '{scheme}'", timeout=5000)
        # Let the theme settle: its buttons fade colours over 0.15 s, and 300 ms after a resize it makes
        # overflowing code blocks focusable. axe must judge the page a reader sees, not a transition.
        page.wait_for_timeout(400)
        AXE_RESULTS.setdefault(path, {})[f"{width} px {scheme}"] = page.evaluate(AXE_RUN)
        if chapter:
            overflow = page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
            assert overflow <= 1, f"{path} at {width} px scrolls sideways by {overflow} px"
            name = f"{path[: -len('.html')].replace('/', '-')}-{width}-{scheme}.jpg"
            page.screenshot(path=str(shots / name), full_page=True, type="jpeg", quality=70)
    serious = [
        f"{mode}: {v['impact']} {v['id']} ({v['help']}) at {[n['target'] for n in v['nodes']][:3]}"
        for mode, violations in AXE_RESULTS[path].items()
        for v in violations
        if v["impact"] in ("critical", "serious")
    ]
    assert not serious, f"{path}: axe-core finds " + "; ".join(serious)
