"""Sphinx hooks for the course site (listed in ``_config.yml`` under ``sphinx.extra_extensions``).

* One setting drives the page header's repository, issues and launch buttons: ``repository.url``
  in ``_config.yml``. Empty: none of them appear. Set: all appear (launch buttons also need a
  provider under ``launch_buttons``, and sphinx-book-theme skips them without a repository).
* The site serves MathJax and the widget scripts itself (``make vendor``); a build without them
  would silently show raw TeX offline, so a missing vendored file is a build warning (an error
  under ``-W``).
* Accessibility: a figure's ``<img alt>`` is the description its PNG carries (written by
  ``specdec_lib.plotting.DescribedFigure``), and each page body gets the markup fixes listed in
  ``book/_static/theme-a11y.css`` (with the theme's template overrides).
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path


def buttons_follow_repository_url(theme_options):
    """Show the repository, issues and launch buttons exactly when a repository URL is set.

    >>> buttons_follow_repository_url({"repository_url": "", "launch_buttons": {"binderhub_url": "b"}})
    {'repository_url': '', 'use_repository_button': False, 'use_issues_button': False}
    >>> buttons_follow_repository_url({"repository_url": "https://github.com/o/r"})["use_issues_button"]
    True
    """
    on = bool(theme_options.get("repository_url"))
    theme_options.update(use_repository_button=on, use_issues_button=on)
    if not on:
        theme_options.pop("launch_buttons", None)
    return theme_options


def missing_vendored_files(confdir, config):
    """Local files the pages load (MathJax, require.js, embed-amd.js) that no static folder holds.

    >>> class Config: html_static_path, mathjax_path, nb_ipywidgets_js = [], "x/tex.js", {"https://cdn/y.js": {}}
    >>> missing_vendored_files(".", Config)
    ['x/tex.js']
    """
    wanted = [config.mathjax_path, *config.nb_ipywidgets_js]
    local = [path for path in wanted if "://" not in path]
    return [path for path in local
            if not any((Path(confdir) / folder / path).is_file() for folder in config.html_static_path)]


def _on_config_inited(app, config):
    buttons_follow_repository_url(config.html_theme_options)
    # Without it pydata-sphinx-theme logs a console error on a reader's first visit.
    config.html_context.setdefault("default_mode", "auto")


def _on_builder_inited(app):
    from sphinx.util import logging

    for path in missing_vendored_files(app.confdir, app.config):
        logging.getLogger(__name__).warning(
            f"vendored asset {path} is missing from html_static_path: run `make vendor`")


def _on_html_page_context(app, pagename, templatename, context, doctree):
    # sphinx-thebe's config script is listed twice (once with filename None, once with ""): a console
    # error "THEBE_JS_URL has already been declared" on every page. Keep the first of each.
    scripts = context.get("script_files") or []
    unique = {}
    for script in scripts:
        unique.setdefault((script.filename or "", script.priority, *sorted(script.attributes.items())), script)
    scripts[:] = unique.values()


def png_description(data: bytes):
    """The ``Description`` text chunk of a PNG (``tEXt`` or uncompressed/compressed ``iTXt``), or None.

    >>> import matplotlib; matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> from specdec_lib.plotting import DescribedFigure
    >>> png_description(DescribedFigure(plt.figure(), "α falls from 0.87 to 0.55")._repr_png_())
    'α falls from 0.87 to 0.55'
    >>> png_description(b"\\x89PNG\\r\\n\\x1a\\n") is None
    True
    """
    pos = 8
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        key, _, rest = body.partition(b"\0")
        if key == b"Description" and kind == b"tEXt":
            return rest.decode("latin-1")
        if key == b"Description" and kind == b"iTXt":  # flag, method, language\0, translated key\0, text
            text = rest[2:].split(b"\0", 2)[2]
            return (zlib.decompress(text) if rest[0] else text).decode("utf-8")
        pos += 12 + length
    return None


def describe_images(app, doctree, docname):
    """Give every image without an alt text the description its PNG file carries."""
    from docutils import nodes

    for image in doctree.findall(nodes.image):
        path = Path(app.srcdir, image.get("candidates", {}).get("*", image["uri"]))
        if not image.get("alt") and path.suffix == ".png" and path.is_file():
            description = png_description(path.read_bytes())
            if description:
                image["alt"] = description


def accessible_body(body: str) -> str:
    """Markup fixes on a rendered page body (each explained in ``book/_static/theme-a11y.css``).

    >>> accessible_body('<summary aria-label="Toggle hidden content">')
    '<summary>'
    >>> accessible_body('<div class="citation" id="id3" role="doc-biblioentry">')
    '<div class="citation" id="id3" role="listitem">'
    """
    return (body.replace('<summary aria-label="Toggle hidden content">', "<summary>")
            .replace('role="doc-biblioentry"', 'role="listitem"'))


def _on_html_page_context_a11y(app, pagename, templatename, context, doctree):
    if "body" in context:
        context["body"] = accessible_body(context["body"])


def setup(app):
    app.connect("config-inited", _on_config_inited)
    app.connect("builder-inited", _on_builder_inited)
    app.connect("html-page-context", _on_html_page_context, priority=900)
    app.connect("doctree-resolved", describe_images)
    app.connect("html-page-context", _on_html_page_context_a11y)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
