"""The built site, read as files: every internal link and anchor resolves, every asset is local.

Reads ``_build/html`` (or ``$SPECDEC_HTML``), which ``make test`` builds before running pytest.
"""

import os
import re
from functools import cache
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
import yaml
from bs4 import BeautifulSoup

ROOT = Path(__file__).resolve().parent.parent
HTML = Path(os.environ.get("SPECDEC_HTML", ROOT / "_build" / "html"))
TOC_FILES = re.findall(r"file:\s*(\S+)", (ROOT / "_toc.yml").read_text())
CHAPTERS = ["book/intro", *TOC_FILES]
ASSET_ATTRIBUTES = {"script": "src", "img": "src", "link": "href", "source": "src", "iframe": "src"}

pytestmark = pytest.mark.skipif(
    not (HTML / "index.html").is_file(),
    reason=f"no built site at {HTML}: run `make book` (or set SPECDEC_HTML)",
)


def site_pages():
    if not HTML.is_dir():
        return []
    return sorted(
        p.relative_to(HTML).as_posix()
        for p in HTML.rglob("*.html")
        if p.relative_to(HTML).parts[0] not in ("_static", "_sources", "_images")
    )


@cache
def soup(page):
    return BeautifulSoup((HTML / page).read_text(encoding="utf-8"), "html.parser")


@cache
def anchors(page):
    return {el.get("id") for el in soup(page).find_all(id=True)} | {
        el.get("name") for el in soup(page).find_all(attrs={"name": True})
    }


def links(page):
    """(tag, url) for every link and asset reference on a page."""
    for tag in soup(page).find_all(["a", *ASSET_ATTRIBUTES]):
        url = tag.get("href") if tag.name in ("a", "link") else tag.get("src")
        if url:
            yield tag.name, url


@pytest.mark.parametrize("page", site_pages())
def test_internal_links_and_anchors_resolve(page):
    broken = []
    for _, url in links(page):
        parts = urlsplit(url)
        if parts.scheme or parts.netloc:
            continue
        target = (HTML / page).parent / unquote(parts.path) if parts.path else HTML / page
        if parts.path.endswith("/"):
            target = target / "index.html"
        target = target.resolve()
        if not target.is_file():
            broken.append(f"{url} (no file)")
        elif parts.fragment and target.suffix == ".html":
            target_page = target.relative_to(HTML.resolve()).as_posix()
            if unquote(parts.fragment) not in anchors(target_page):
                broken.append(f"{url} (no anchor)")
    assert not broken, f"{page}: broken internal links: {broken}"


@pytest.mark.parametrize("page", site_pages())
def test_assets_come_from_the_site_itself(page):
    """Offline and private: no script, stylesheet, image or frame is fetched from another origin."""
    remote = [
        url
        for tag, url in links(page)
        if tag != "a" and (urlsplit(url).scheme in ("http", "https") or url.startswith("//"))
    ]
    assert not remote, f"{page} loads third-party assets: {remote}"


def test_math_and_widget_scripts_are_vendored():
    pages = [soup(p) for p in site_pages()]
    scripts = {
        tag["src"].split("?")[0].rsplit("_static/", 1)[-1]
        for s in pages
        for tag in s.find_all("script", src=True)
    }
    assert "vendor/mathjax/tex-mml-chtml.js" in scripts
    for path in (
        "vendor/mathjax/tex-mml-chtml.js",
        "vendor/require.js",
        "vendor/@jupyter-widgets/html-manager/dist/embed-amd.js",
        "vendor/mathjax/output/chtml/fonts/woff-v2/MathJax_Main-Regular.woff",
    ):
        assert (HTML / "_static" / path).is_file(), f"{path} was not copied into the site (make vendor)"


@pytest.mark.parametrize("chapter", [c for c in CHAPTERS if (ROOT / f"{c}.ipynb").is_file()])
def test_every_notebook_chapter_offers_its_ipynb(chapter):
    page = f"{chapter}.html"
    hrefs = [a["href"] for a in soup(page).find_all("a", href=True) if a["href"].endswith(".ipynb")]
    assert hrefs, f"{page} has no .ipynb download link"
    assert ((HTML / page).parent / hrefs[0]).resolve().is_file()


def test_no_repository_or_launch_buttons_without_a_repository_url():
    url = yaml.safe_load((ROOT / "_config.yml").read_text()).get("repository", {}).get("url")
    html = (HTML / "book" / "mechanism.html").read_text(encoding="utf-8")
    shown = "btn-source-repository-button" in html or "launch-buttons" in html
    assert shown == bool(url), "buttons must follow `repository.url` in _config.yml"


def test_execution_statistics_list_every_notebook():
    table = soup("book/execution_stats.html").find("table")
    assert table is not None, "the execution statistics page has no table"
    listed = table.get_text(" ")
    notebooks = [c for c in CHAPTERS if (ROOT / f"{c}.ipynb").is_file()]
    missing = [c for c in notebooks if c not in listed]
    assert not missing, f"not in the execution statistics: {missing}"


def test_the_accessibility_checker_is_not_part_of_the_site():
    """axe-core is a test tool: the browser tests inject it, no page loads it and the site does not ship it."""
    shipped = [p.relative_to(HTML).as_posix() for p in HTML.rglob("axe*.js")]
    loading = [
        page for page in site_pages() if any("axe" in url.rsplit("/", 1)[-1] for _, url in links(page))
    ]
    assert not shipped and not loading, f"axe-core in the site: {shipped + loading}"
