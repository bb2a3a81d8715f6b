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

Usage:
    python -m bookkit.pdf SITE_DIR OUTPUT.pdf [--edition full|student]
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
SOLUTIONS_HEADING = "Solutions to the exercises"
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


def _print_page(context: BrowserContext, url: str, base: str, *, move_solutions: bool) -> tuple[str, bytes, int]:
    """Open ``url`` offline, wait for formulas and figures, print it; return (title, pdf, solutions)."""
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
    solutions = page.evaluate(MOVE_SOLUTIONS_JS, SOLUTIONS_HEADING) if move_solutions else 0
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


def _front_matter_html(book_title: str, author: str, edition: str, entries: list[tuple[str, str, int]]) -> str:
    """The title page and the table of contents; ``entries`` are (part, title, first page)."""
    rows, current_part = [], None
    for part, title, first_page in entries:
        if part != current_part and part:
            rows.append(f'<tr class="part"><td colspan="2">{html.escape(part)}</td></tr>')
        current_part = part
        rows.append(f"<tr><td>{html.escape(title)}</td><td class='page'>{first_page}</td></tr>")
    subtitle = "Student edition: the exercises without their solutions" if edition == "student" else (
        "Complete edition: the solutions follow each chapter's exercises"
    )
    return f"""<!DOCTYPE html><html><head><meta charset="utf-8"><style>
body {{ font-family: "DejaVu Serif", serif; color: #222; }}
.cover {{ height: 240mm; display: flex; flex-direction: column; justify-content: center; break-after: page; }}
.cover h1 {{ font-size: 30pt; margin: 0 0 8mm; }} .cover p {{ font-size: 13pt; margin: 2mm 0; }}
h2 {{ font-size: 18pt; }} table {{ width: 100%; border-collapse: collapse; font-size: 11pt; }}
td {{ padding: 1.2mm 0; }} td.page {{ text-align: right; width: 15mm; }}
tr.part td {{ font-weight: bold; padding-top: 4mm; }}
</style></head><body>
<section class="cover"><h1>{html.escape(book_title)}</h1><p>{html.escape(author)}</p>
<p>{html.escape(subtitle)}</p><p>Printed from the website built on {time.strftime("%Y-%m-%d")}.</p></section>
<h2>Contents</h2><table>{"".join(rows)}</table></body></html>"""


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


def build_pdf(site: Path, output: Path, *, edition: str = "full", toc_path: Path = ROOT / "_toc.yml") -> dict:
    """Print the book from the built ``site`` into ``output``; return a summary (pages, seconds, size)."""
    if edition not in EDITIONS:
        raise ValueError(f"edition must be one of {EDITIONS}, got {edition!r}")
    if not (site / "index.html").is_file():
        raise FileNotFoundError(f"no built site at {site} (no index.html): build it first")
    if not Path(CHROMIUM).is_file():
        raise FileNotFoundError(f"{CHROMIUM} not found: install Debian's chromium (make browser does)")
    from playwright.sync_api import sync_playwright

    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    start = time.perf_counter()
    documents: list[Document] = []
    with serve(site) as base, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1100, "height": 1400})
        for part, docname in toc_documents(toc_path):
            title, pdf, solutions = _print_page(
                context, f"{base}/{docname}.html", base, move_solutions=edition == "full"
            )
            documents.append(Document(docname, part, title, pdf, _page_count(pdf), solutions))
            print(f"  {docname}: {documents[-1].pages} pages ({time.perf_counter() - start:.0f} s)", flush=True)

        def front_matter(first_pages: list[int]) -> bytes:
            entries = [(doc.part, doc.title, first) for doc, first in zip(documents, first_pages, strict=True)]
            page = context.new_page()
            page.set_content(_front_matter_html(config["title"], config.get("author", ""), edition, entries))
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
        {"/Title": f"{config['title']}" + (" (student edition)" if edition == "student" else ""),
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
    args = parser.parse_args()
    summary = build_pdf(args.site.resolve(), args.output, edition=args.edition)
    print(
        f"{args.output}: {summary['pages']} pages, {summary['documents']} documents, "
        f"{summary['solutions']} solutions at chapter ends, {summary['megabytes']} MB, "
        f"printed in {summary['seconds']} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
