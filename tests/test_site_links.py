"""The built site, read as files: every internal link and anchor resolves, every asset is local.

Reads the built site (the ``built_site`` fixture: ``_build/html`` or ``$SPECDEC_HTML``).
"""

import re
from functools import cache
from urllib.parse import unquote, urlsplit

import pytest
import yaml
from bs4 import BeautifulSoup
from conftest import ROOT, site_pages

TOC_FILES = re.findall(r"file:\s*(\S+)", (ROOT / "_toc.yml").read_text())
CHAPTERS = ["book/intro", *TOC_FILES]
ASSET_ATTRIBUTES = {"script": "src", "img": "src", "link": "href", "source": "src", "iframe": "src"}


@cache
def soup(html, page):
    return BeautifulSoup((html / page).read_text(encoding="utf-8"), "html.parser")


@cache
def anchors(html, page):
    return {el.get("id") for el in soup(html, page).find_all(id=True)} | {
        el.get("name") for el in soup(html, page).find_all(attrs={"name": True})
    }


def links(html, page):
    """(tag, url) for every link and asset reference on a page."""
    for tag in soup(html, page).find_all(["a", *ASSET_ATTRIBUTES]):
        url = tag.get("href") if tag.name in ("a", "link") else tag.get("src")
        if url:
            yield tag.name, url


def test_internal_links_and_anchors_resolve(built_site, site_page):
    html, page = built_site, site_page
    broken = []
    for _, url in links(html, page):
        parts = urlsplit(url)
        if parts.scheme or parts.netloc:
            continue
        target = (html / page).parent / unquote(parts.path) if parts.path else html / page
        if parts.path.endswith("/"):
            target = target / "index.html"
        target = target.resolve()
        if not target.is_file():
            broken.append(f"{url} (no file)")
        elif parts.fragment and target.suffix == ".html":
            target_page = target.relative_to(html.resolve()).as_posix()
            if unquote(parts.fragment) not in anchors(html, target_page):
                broken.append(f"{url} (no anchor)")
    assert not broken, f"{page}: broken internal links: {broken}"


def test_assets_come_from_the_site_itself(built_site, site_page):
    """Offline and private: no script, stylesheet, image or frame is fetched from another origin."""
    remote = [
        url
        for tag, url in links(built_site, site_page)
        if tag != "a" and (urlsplit(url).scheme in ("http", "https") or url.startswith("//"))
    ]
    assert not remote, f"{site_page} loads third-party assets: {remote}"


def test_math_and_widget_scripts_are_vendored(built_site):
    pages = [soup(built_site, p) for p in site_pages(built_site)]
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
        assert (built_site / "_static" / path).is_file(), f"{path} was not copied into the site (make vendor)"


@pytest.mark.parametrize("chapter", [c for c in CHAPTERS if (ROOT / f"{c}.ipynb").is_file()])
def test_every_notebook_chapter_offers_its_ipynb(built_site, chapter):
    page = f"{chapter}.html"
    hrefs = [
        a["href"] for a in soup(built_site, page).find_all("a", href=True) if a["href"].endswith(".ipynb")
    ]
    assert hrefs, f"{page} has no .ipynb download link"
    assert ((built_site / page).parent / hrefs[0]).resolve().is_file()


def test_no_repository_or_launch_buttons_without_a_repository_url(built_site):
    url = yaml.safe_load((ROOT / "_config.yml").read_text()).get("repository", {}).get("url")
    html = (built_site / "book" / "mechanism.html").read_text(encoding="utf-8")
    shown = "btn-source-repository-button" in html or "launch-buttons" in html
    assert shown == bool(url), "buttons must follow `repository.url` in _config.yml"


def test_execution_statistics_list_every_notebook_the_build_executed(built_site):
    """A site built with execution lists every notebook; one built from committed outputs says so and lists none."""
    page = soup(built_site, "book/execution_stats.html")
    table = page.find("table")
    assert table is not None, "the execution statistics page has no table"
    listed = [c for c in CHAPTERS if (ROOT / f"{c}.ipynb").is_file() and c in table.get_text(" ")]
    if "built from the committed notebook outputs" in page.get_text(" "):
        assert listed == [], f"a build that executed nothing lists {listed}"
    else:
        missing = [c for c in CHAPTERS if (ROOT / f"{c}.ipynb").is_file() and c not in listed]
        assert not missing, f"not in the execution statistics: {missing}"


def test_the_accessibility_checker_is_not_part_of_the_site(built_site):
    """axe-core is a test tool: the browser tests inject it, no page loads it and the site does not ship it."""
    shipped = [p.relative_to(built_site).as_posix() for p in built_site.rglob("axe*.js")]
    loading = [
        page
        for page in site_pages(built_site)
        if any("axe" in url.rsplit("/", 1)[-1] for _, url in links(built_site, page))
    ]
    assert not shipped and not loading, f"axe-core in the site: {shipped + loading}"
