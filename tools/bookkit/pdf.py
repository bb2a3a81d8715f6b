"""The PDF editions of the book, printed from the built website by Chromium (``make pdf``).

Every page of the table of contents is opened in Debian's headless Chromium (through
Playwright), served from ``127.0.0.1`` with every other request blocked, exactly as the browser
check does. Once the bundled MathJax has typeset every formula and every figure has loaded, the
page is printed to A4 with the theme's print styles plus a few of ours (no sidebars, buttons or
navigation; long code lines wrap instead of being cut). A page on which MathJax reports an error
stops the edition.

In the full edition the solutions, which the website folds away, are moved to the end of their
chapter under "Solutions to the exercises" and printed unfolded; the student edition is printed
from the student site, which has none. A title page with a table of contents (parts, numbered
chapters and their first pages) is printed the same way, the pages are merged with ``pypdf``,
numbered at the foot, and the PDF gets an outline (bookmarks) of the parts and pages.

The title page, the contents, the part titles and the solutions' heading are in the site's
language: the book's title and author come from the configuration the site was built with
(``--config``: ``_config.yml``, or for the Chinese site the one ``bookkit.i18n zh-config`` writes),
the part captions of ``_toc.yml`` from the catalog of the root document, through which the Chinese
site translates them (its sidebar), and the few words of the PDF's own from :data:`WORDS`.

Usage:
    python -m bookkit.pdf SITE_DIR OUTPUT.pdf [--edition full|student] [--config CONFIG.yml]
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import html
import http.server
import io
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import yaml
from pypdf import PdfReader, PdfWriter
from pypdf.generic import IndirectObject

from bookkit.i18n import load
from bookkit.language_links import site_of

if TYPE_CHECKING:
    from playwright.sync_api import Browser, BrowserContext, PdfMargins, Route

ROOT = Path(__file__).resolve().parents[2]  # tools/bookkit/ -> the repository
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
EDITIONS = ("full", "student")


@dataclass(frozen=True)
class Words:
    """What the PDF itself writes, in one language (the pages are the site's own)."""

    contents: str
    full_edition: str
    student_edition: str
    printed_on: str  # formatted with the build's ``date``
    solutions: str  # the heading of the solutions moved to a chapter's end
    student_title: str  # appended to the title in the PDF's metadata


# By Sphinx ``language`` (``en`` for a configuration that sets none: :func:`language_of`).
WORDS = {
    "en": Words(
        contents="Contents",
        full_edition="Complete edition: the solutions follow each chapter's exercises",
        student_edition="Student edition: the exercises without their solutions",
        printed_on="Printed from the website built on {date}.",
        solutions="Solutions to the exercises",
        student_title=" (student edition)",
    ),
    "zh_CN": Words(
        contents="目录",
        full_edition="完整版：每章的解答附在该章练习之后",
        student_edition="学生版：只有练习，不含解答",
        printed_on="由 {date} 构建的网站打印。",
        solutions="练习解答",
        student_title="（学生版）",
    ),
}
SOLUTIONS_HEADING = WORDS["en"].solutions
MARGINS: PdfMargins = {"top": "16mm", "bottom": "18mm", "left": "15mm", "right": "15mm"}

# Print styles on top of the theme's: only the article, full width; code wraps instead of being
# cut at the margin; figures and headings are not split from what follows; chapter numbers shown;
# links within the site (their targets are not in the PDF) read as plain text.
PRINT_CSS = """
.bd-header, .bd-header-article, .bd-sidebar-primary, .bd-sidebar-secondary, .bd-footer,
.bd-footer-article, .bd-footer-content, .prev-next-footer, .headerlink, .toggle-button,
.copybtn, .dropdown-launch-buttons, .skip-link, #pst-back-to-top, .search-button-field
  { display: none !important; }
.bd-container, .bd-container__inner, .bd-main, .bd-content, .bd-article-container, .bd-page-width
  { max-width: 100% !important; width: 100% !important; padding: 0 !important; margin: 0 !important; }
pre, .highlight pre { white-space: pre-wrap !important; overflow-wrap: anywhere; overflow: visible !important; }
img, figure, .cell_output, .cell_input { break-inside: avoid; }
h1 .section-number { display: inline !important; }
a:not([href]) { color: inherit !important; text-decoration: none !important; }
h1, h2, h3, h4, .admonition-title { break-after: avoid; }
mjx-container[display="true"] { overflow: visible !important; }
.pdf-solutions { break-before: page; }
.pdf-solutions .solution .toggle-hidden, .pdf-solutions .solution details > * { display: block !important; }
.pdf-solutions .solution { visibility: visible !important; }
"""

# Moves every solution of the article to a section at its end and unfolds it. Returns how many.
MOVE_SOLUTIONS_JS = """
(heading) => {
  const article = document.querySelector("article.bd-article") || document.querySelector("main");
  const solutions = [...article.querySelectorAll("div.solution")];
  if (solutions.length === 0) return 0;
  const section = document.createElement("section");
  section.className = "pdf-solutions";
  const title = document.createElement("h2");
  title.textContent = heading;
  section.appendChild(title);
  for (const solution of solutions) {
    for (const element of [solution, ...solution.querySelectorAll("*")]) {
      element.classList.remove("toggle-hidden");
      if (element.tagName === "DETAILS") element.open = true;
    }
    section.appendChild(solution);
  }
  article.appendChild(section);
  return solutions.length;
}
"""

WAIT_FOR_PAGE_JS = """
async () => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) await MathJax.startup.promise;
  await Promise.all([...document.images].map((image) => image.complete ? null
    : new Promise((done) => { image.onload = done; image.onerror = done; })));
  const errors = [...document.querySelectorAll("mjx-merror, .MathJax_Error")]
    .map((node) => node.textContent);
  const broken = [...document.images].filter((image) => image.naturalWidth === 0).map((image) => image.src);
  return { errors, broken };
}
"""

FOOTER = (
    '<div style="font-size:8pt; width:100%; text-align:center; color:#555;'
    ' font-family:sans-serif;"><span class="pageNumber"></span></div>'
)


@dataclass(frozen=True)
class Document:
    """One page of the table of contents, as printed."""

    docname: str
    part: str
    title: str
    pdf: bytes
    pages: int
    solutions: int


def language_of(config: dict) -> str:
    """The Sphinx ``language`` of a book configuration (``en`` when it sets none)."""
    return (config.get("sphinx", {}).get("config", {}) or {}).get("language") or "en"


def caption_translations(config: dict, toc_path: Path) -> dict[str, str]:
    """The part captions of ``_toc.yml`` in the language of ``config``, by English caption.

    The captions are messages of the root document's catalog (Jupyter Book puts the parts' toctrees
    in the root document), the catalog the site in that language was built with (``locale_dirs``).

    Raises:
        ValueError: if the configuration names no catalogs, or a caption has no current translation.
    """
    captions = sorted({part for part, _ in toc_documents(toc_path) if part})
    language = language_of(config)
    if language == "en":
        return {caption: caption for caption in captions}
    toc = yaml.safe_load(toc_path.read_text(encoding="utf-8"))
    locale_dirs = config.get("sphinx", {}).get("config", {}).get("locale_dirs") or []
    if not locale_dirs:
        raise ValueError(f"the {language} configuration names no catalogs (sphinx.config.locale_dirs)")
    catalog = load(Path(locale_dirs[0]) / language / "LC_MESSAGES" / f"{toc['root']}.po")
    translated = {}
    for caption in captions:
        message = catalog.get(caption)
        if message is None or not message.string or message.fuzzy:
            raise ValueError(f"the part caption {caption!r} has no current translation in the {toc['root']} catalog")
        translated[caption] = str(message.string)
    return translated


def toc_documents(toc_path: Path) -> list[tuple[str, str]]:
    """``(part caption, docname)`` of every page of ``_toc.yml``, in reading order."""
    toc = yaml.safe_load(toc_path.read_text(encoding="utf-8"))
    documents = [("", toc["root"])]
    for part in toc.get("parts", []):
        documents += [(part.get("caption", ""), chapter["file"]) for chapter in part["chapters"]]
    return documents


@contextlib.contextmanager
def serve(site: Path) -> Iterator[str]:
    """Serve ``site`` on 127.0.0.1 in a thread; yield its base URL."""

    class QuietHandler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (signature of the base)
            pass

    handler = functools.partial(QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _page_count(pdf: bytes) -> int:
    return len(PdfReader(io.BytesIO(pdf)).pages)


def _print_page(
    context: BrowserContext, url: str, base: str, *, solutions_heading: str | None
) -> tuple[str, bytes, int]:
    """Open ``url`` offline, wait for formulas and figures, print it; return (title, pdf, solutions).

    With a ``solutions_heading``, the page's solutions are moved under it at the article's end.
    """
    page = context.new_page()
    blocked: list[str] = []

    def route(request_route: Route) -> None:
        if request_route.request.url.startswith(base):
            request_route.continue_()
        else:
            blocked.append(request_route.request.url)
            request_route.abort()

    page.route("**/*", route)
    page.goto(url, wait_until="load")
    state = page.evaluate(WAIT_FOR_PAGE_JS)
    if state["errors"] or state["broken"]:
        raise RuntimeError(f"{url}: MathJax errors {state['errors'][:3]}, broken images {state['broken'][:3]}")
    if blocked:
        raise RuntimeError(f"{url} requested resources outside the site (the PDF must be offline): {blocked[:3]}")
    solutions = page.evaluate(MOVE_SOLUTIONS_JS, solutions_heading) if solutions_heading else 0
    # Links within the site would point at the temporary local server: keep their text only.
    page.evaluate(
        "(base) => document.querySelectorAll('a[href]').forEach((a) => {"
        " if (a.href.startsWith(base)) a.removeAttribute('href'); })",
        base,
    )
    page.add_style_tag(content=PRINT_CSS)
    title = page.evaluate(
        "() => { const h = document.querySelector('article h1'); if (!h) return document.title;"
        " const c = h.cloneNode(true); c.querySelectorAll('.headerlink').forEach((a) => a.remove());"
        " return c.textContent.trim(); }"
    )
    pdf = page.pdf(format="A4", print_background=True, margin=MARGINS)
    page.close()
    return title, pdf, solutions


def _front_matter_html(
    book_title: str, author: str, edition: str, entries: list[tuple[str, str, int]], language: str = "en"
) -> str:
    """The title page and the table of contents; ``entries`` are (part, title, first page)."""
    words = WORDS[language]
    rows, current_part = [], None
    for part, title, first_page in entries:
        if part != current_part and part:
            rows.append(f'<tr class="part"><td colspan="2">{html.escape(part)}</td></tr>')
        current_part = part
        rows.append(f"<tr><td>{html.escape(title)}</td><td class='page'>{first_page}</td></tr>")
    subtitle = words.student_edition if edition == "student" else words.full_edition
    # lang: Chromium draws the Chinese with the Simplified Chinese forms of the Noto CJK font.
    return f"""<!DOCTYPE html><html lang="{site_of(language).tag}"><head><meta charset="utf-8"><style>
body {{ font-family: "DejaVu Serif", "Noto Serif CJK SC", "Noto Sans CJK SC", serif; color: #222; }}
.cover {{ height: 240mm; display: flex; flex-direction: column; justify-content: center; break-after: page; }}
.cover h1 {{ font-size: 30pt; margin: 0 0 8mm; }} .cover p {{ font-size: 13pt; margin: 2mm 0; }}
h2 {{ font-size: 18pt; }} table {{ width: 100%; border-collapse: collapse; font-size: 11pt; }}
td {{ padding: 1.2mm 0; }} td.page {{ text-align: right; width: 15mm; }}
tr.part td {{ font-weight: bold; padding-top: 4mm; }}
</style></head><body>
<section class="cover"><h1>{html.escape(book_title)}</h1><p>{html.escape(author)}</p>
<p>{html.escape(subtitle)}</p><p>{html.escape(words.printed_on.format(date=time.strftime("%Y-%m-%d")))}</p></section>
<h2>{html.escape(words.contents)}</h2><table>{"".join(rows)}</table></body></html>"""


def _number_pages(writer: PdfWriter, browser: Browser, first_numbered: int) -> None:
    """Stamp page numbers at the foot of every page from ``first_numbered`` (0-based) on."""
    count = len(writer.pages)
    blank = "<div style='break-after: page; height: 1px'></div>" * count
    page = browser.new_page()
    page.set_content(f"<!DOCTYPE html><html><body style='margin:0'>{blank}</body></html>")
    overlay = PdfReader(
        io.BytesIO(
            page.pdf(
                format="A4",
                margin=MARGINS,
                display_header_footer=True,
                header_template="<span></span>",
                footer_template=FOOTER,
            )
        )
    )
    page.close()
    if len(overlay.pages) < count:
        raise RuntimeError(f"the page-number overlay has {len(overlay.pages)} pages for {count}")
    for index in range(first_numbered, count):
        writer.pages[index].merge_page(overlay.pages[index])


def build_pdf(
    site: Path,
    output: Path,
    *,
    edition: str = "full",
    toc_path: Path = ROOT / "_toc.yml",
    config_path: Path = ROOT / "_config.yml",
) -> dict:
    """Print the book from the built ``site`` into ``output``; return a summary (pages, seconds, size).

    Args:
        site: the built website (its ``index.html``).
        output: the PDF to write.
        edition: ``full`` (solutions moved to each chapter's end) or ``student`` (a site without them).
        toc_path: the table of contents the site was built from.
        config_path: the configuration the site was built with: its title, author and language
            (and, for a translated site, its catalogs) make the title page and the contents.

    Raises:
        ValueError: if ``edition`` is unknown, the configuration's language has no :data:`WORDS`
            or a part caption has no translation.
        FileNotFoundError: if the site or Chromium is missing.
    """
    if edition not in EDITIONS:
        raise ValueError(f"edition must be one of {EDITIONS}, got {edition!r}")
    config = yaml.safe_load(config_path.read_text(encoding="utf-8"))
    language = language_of(config)
    if language not in WORDS:
        raise ValueError(f"no words for a PDF in {language!r} ({config_path}); known: {sorted(WORDS)}")
    words, captions = WORDS[language], caption_translations(config, toc_path)
    if not (site / "index.html").is_file():
        raise FileNotFoundError(f"no built site at {site} (no index.html): build it first")
    if not Path(CHROMIUM).is_file():
        raise FileNotFoundError(f"{CHROMIUM} not found: install Debian's chromium (make browser does)")
    from playwright.sync_api import sync_playwright

    start = time.perf_counter()
    documents: list[Document] = []
    with serve(site) as base, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1100, "height": 1400})
        solutions_heading = words.solutions if edition == "full" else None
        for part, docname in toc_documents(toc_path):
            title, pdf, solutions = _print_page(
                context, f"{base}/{docname}.html", base, solutions_heading=solutions_heading
            )
            documents.append(Document(docname, captions.get(part, part), title, pdf, _page_count(pdf), solutions))
            print(f"  {docname}: {documents[-1].pages} pages ({time.perf_counter() - start:.0f} s)", flush=True)

        def front_matter(first_pages: list[int]) -> bytes:
            entries = [(doc.part, doc.title, first) for doc, first in zip(documents, first_pages, strict=True)]
            page = context.new_page()
            page.set_content(_front_matter_html(config["title"], config.get("author", ""), edition, entries, language))
            pdf = page.pdf(format="A4", print_background=True, margin=MARGINS)
            page.close()
            return pdf

        def first_pages(front_pages: int) -> list[int]:
            starts, next_page = [], front_pages + 1
            for doc in documents:
                starts.append(next_page)
                next_page += doc.pages
            return starts

        # The contents' length does not depend on the page numbers it lists: print it once to
        # count its pages, then again with the real numbers.
        front_pages = _page_count(front_matter(first_pages(1)))
        front = front_matter(first_pages(front_pages))
        if _page_count(front) != front_pages:
            raise RuntimeError("the table of contents changed length when its page numbers were filled in")

        writer = PdfWriter()
        writer.append(PdfReader(io.BytesIO(front)))
        parents: dict[str, IndirectObject] = {}
        for doc, first in zip(documents, first_pages(front_pages), strict=True):
            writer.append(PdfReader(io.BytesIO(doc.pdf)))
            parent = None
            if doc.part:
                if doc.part not in parents:
                    parents[doc.part] = writer.add_outline_item(title=doc.part, page_number=first - 1)
                parent = parents[doc.part]
            writer.add_outline_item(title=doc.title, page_number=first - 1, parent=parent)
        _number_pages(writer, browser, first_numbered=1)
        browser.close()

    writer.add_metadata(
        {"/Title": f"{config['title']}" + (words.student_title if edition == "student" else ""),
         "/Author": config.get("author", "")}
    )
    writer.compress_identical_objects(remove_duplicates=True, remove_unreferenced=True)
    output.parent.mkdir(parents=True, exist_ok=True)
    with output.open("wb") as handle:
        writer.write(handle)
    return {
        "edition": edition,
        "pages": len(writer.pages),
        "documents": len(documents),
        "solutions": sum(doc.solutions for doc in documents),
        "seconds": round(time.perf_counter() - start, 1),
        "megabytes": round(output.stat().st_size / 1e6, 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("site", type=Path, help="the built website (its index.html)")
    parser.add_argument("output", type=Path, help="the PDF to write")
    parser.add_argument("--edition", choices=EDITIONS, default="full")
    parser.add_argument(
        "--config", type=Path, default=ROOT / "_config.yml",
        help="the configuration the site was built with (its title, author, language and catalogs)",
    )
    args = parser.parse_args()
    summary = build_pdf(args.site.resolve(), args.output, edition=args.edition, config_path=args.config)
    print(
        f"{args.output}: {summary['pages']} pages, {summary['documents']} documents, "
        f"{summary['solutions']} solutions at chapter ends, {summary['megabytes']} MB, "
        f"printed in {summary['seconds']} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
