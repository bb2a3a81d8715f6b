"""A Sphinx extension for the two editions: on every page, a link to the same page in the other language.

Loaded by the English build (``_config.yml``) and by the Chinese site (``make book-zh``, whose
configuration :func:`bookkit.i18n.chinese_config` derives from the English one), so the two sites
link to each other in one way. The published layout is fixed here, in :data:`SITES`: the English
site at the root, the Chinese site in its ``zh/`` folder, each page at the same path in both
(``book/intro.html`` and ``zh/book/intro.html``). ``make book-zh`` copies the Chinese site into
the English one's ``zh/``, so that the links resolve locally as they do once published.

The link is a button of the article's header, left of the theme's own buttons, labelled with the
other language's name in that language ("中文" on the English site, "English" on the Chinese one)
beside a language icon; at a phone's width the icon alone (``static/language-link.css``). The print
styles of the PDF editions hide the header, so it is not printed. Each page's ``<head>``
also names the other version (``<link rel="alternate" hreflang=...>``), as search engines expect.
On the Chinese site the search box's placeholder is Chinese too (Jupyter Book sets it in English).

``language_links = False`` in the Sphinx configuration turns the link off, for a site that has no
counterpart in the other language.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.config import Config


@dataclass(frozen=True)
class Site:
    """One language's site in the published layout."""

    language: str  # Sphinx's ``language``
    tag: str  # the BCP 47 tag of ``hreflang`` and ``lang``
    folder: str  # relative to the published root, "" for the root itself
    name: str  # the language's name in that language: the link's label on the other site
    tooltip: str  # the link's title, in the language of the site it leads to
    search_placeholder: str


SITES = (
    Site("en", "en", "", "English", "Read this page in English", "Search this book..."),
    Site("zh_CN", "zh-CN", "zh", "中文", "阅读本页的中文版", "搜索本书……"),
)
TEMPLATES = Path(__file__).resolve().parent / "templates"
COMPONENT = "language-link.html"
# Its place in the header: beside the theme's buttons, the label dropped on a phone's width.
STATIC = Path(__file__).resolve().parent / "static"
STYLESHEET = "language-link.css"
# The theme's default for the right end of the article header (sphinx-book-theme's theme.conf).
HEADER_BUTTONS = "article-header-buttons.html"


def site_of(language: str | None) -> Site:
    """The site of a Sphinx ``language`` (``None`` and ``en`` are the English site).

    Raises:
        ValueError: if the book has no site in that language.
    """
    wanted = language or "en"
    for site in SITES:
        if site.language == wanted:
            return site
    raise ValueError(f"no site in language {wanted!r}; the sites are {[s.language for s in SITES]}")


def other_site(site: Site) -> Site:
    """The book's site in the other language."""
    (other,) = [s for s in SITES if s is not site]
    return other


def link_between(pagename: str, source: Site, target: Site, suffix: str = ".html") -> str:
    """The relative URL from ``pagename`` on ``source`` to the same page on ``target``.

    Args:
        pagename: Sphinx's page name, ``book/intro`` (``/``-separated, no suffix).
        source: the site the page is on.
        target: the site the link leads to.
        suffix: the builder's file suffix.

    Returns:
        A URL relative to the page's own: ``../zh/book/intro.html`` from the English
        ``book/intro.html``, ``../../book/intro.html`` from the Chinese one.

    Raises:
        ValueError: if ``pagename`` is empty, absolute or climbs out of its site.
    """
    parts = pagename.split("/")
    if not pagename or pagename.startswith("/") or ".." in parts or "" in parts:
        raise ValueError(f"a page name is a relative path inside the site, got {pagename!r}")
    depth = len(parts) - 1 + (len(source.folder.split("/")) if source.folder else 0)
    folder = f"{target.folder}/" if target.folder else ""
    return "../" * depth + folder + pagename + suffix


def _configure(app: Sphinx, config: Config) -> None:
    """Put the link's template in the article header, and the site's search placeholder."""
    if not config.language_links:
        return
    site = site_of(config.language)
    config.templates_path = [*config.templates_path, str(TEMPLATES)]
    config.html_static_path = [*config.html_static_path, str(STATIC)]
    options = dict(config.html_theme_options or {})
    options.setdefault("article_header_end", [COMPONENT, HEADER_BUTTONS])
    if site.language != "en":
        options["search_bar_text"] = site.search_placeholder
    config.html_theme_options = options


def _page_context(app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any) -> None:
    """The link for ``pagename`` (the template's ``language_link``) and the ``<head>``'s alternate."""
    if not app.config.language_links or app.builder.name != "html":
        return
    site = site_of(app.config.language)
    other = other_site(site)
    href = link_between(pagename, site, other, getattr(app.builder, "out_suffix", ".html"))
    context["language_link"] = {"href": href, "tag": other.tag, "label": other.name, "tooltip": other.tooltip}
    alternate = f'<link rel="alternate" hreflang="{other.tag}" href="{html.escape(href, quote=True)}" />\n'
    context["metatags"] = context.get("metatags", "") + alternate


def setup(app: Sphinx) -> dict[str, object]:
    app.add_config_value("language_links", True, "html", types=[bool])
    # After Jupyter Book's and the theme's own handlers of config-inited (priority 500).
    app.connect("config-inited", _configure, priority=800)
    app.connect("html-page-context", _page_context)
    app.add_css_file(STYLESHEET)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
