"""The Chinese edition's message catalogs: the extraction configuration and the completeness check.

    python -m bookkit.i18n config _build/i18n/_config.yml     # the gettext build's configuration
    python -m bookkit.i18n check --pot _build/i18n/_build/gettext [--only book/intro ...]
    python -m bookkit.i18n zh-config _build/zh/_config.yml --cache _build/.jupyter_cache   # make book-zh
    python -m bookkit.i18n zh-config _build/student/zh/_config.yml --source _build/student/source \
        --cache _build/student/_build/.jupyter_cache --edition student                 # make student-zh
    python -m bookkit.i18n unflag locale     # after sphinx-intl update (make i18n): no format flags,
                                             # no obsolete duplicate of a current message

The Chinese edition is not a second copy of the sources: Sphinx's gettext builder extracts every
paragraph, heading, caption and admonition of the English book as a *message* (``make i18n``, with
execution off, so nothing runs; :mod:`bookkit.i18n_sphinx` adds the table cells, exercise titles and
figure captions and alt texts it would miss), ``sphinx-intl`` merges them into one catalog per document,
``locale/zh_CN/LC_MESSAGES/<document>.po``, and a translator fills in each message's Chinese. A
changed English paragraph becomes a new message (its old translation is kept as a *fuzzy*
suggestion), so the catalogs show exactly what needs translating again.

``check`` fails, naming the document and the English message, when a message of the current English
(the ``.pot`` templates of a fresh extraction, or the catalogs themselves without ``--pot``) has no
current translation: missing, empty or fuzzy. For every translated message it also checks what a
translation must not change: the targets of the MyST roles (``{term}``, ``{doc}``, ``{ref}``,
``{cite}``, ``{eq}``, ``{glue:text}``, ...), inline math and inline code; and that each glossary term
has one Chinese form throughout: the glossary (``book/glossary.md``) lists each term's Chinese forms,
the most common first, and a translation uses that first form, never one of the others.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml
from babel.messages.catalog import Catalog
from babel.messages.pofile import read_po

from bookkit.i18n_tidy import unflag

LANGUAGE = "zh_CN"
ROOT = Path(__file__).resolve().parents[2]
LOCALE_DIR = ROOT / "locale"
GLOSSARY = ROOT / "book" / "glossary.md"
# Stays English in the Chinese edition (the issue allows it): the API reference, generated from
# posenc's docstrings. `make i18n` writes no catalog for it.
ENGLISH_ONLY = ("book/api",)
# Documents whose translation is complete: tests/test_i18n.py (part of make test) checks their
# catalogs, so a translation that loses a role target or strays from the glossary fails.
TRANSLATED = (
    "book/build_report",
    "book/exercises",
    "book/glossary",
    "book/how_to_use",
    "book/instructor_guide",
    "book/intro",
    "book/notation",
    "book/references",
    "notebooks/00_tour",
    "notebooks/01_permutation_invariance",
    "notebooks/02_one_hot_and_learned",
    "notebooks/03_sinusoidal",
    "notebooks/04_relative_position",
    "notebooks/05_rope_derivation",
    "notebooks/06_rope_complex_and_implementations",
    "notebooks/07_rope_long_range",
    "notebooks/08_trained_extrapolation",
    "notebooks/09_stretching_rope",
)
# Loaded by the extraction and the Chinese site only, never by the English build.
EXTENSION = "bookkit.i18n_sphinx"
# Loaded by the Chinese site only: a translated paragraph's {glue:text} values, from its chapter.
GLUE_EXTENSION = "bookkit.i18n_glue"
# Loaded by the Chinese site only: Sphinx's Chinese search without its slow list of Latin words.
SEARCH_EXTENSION = "bookkit.zh_search"
# Loaded by the Chinese site only: translated nodes saved with their page, not with a copy of the build.
NODES_EXTENSION = "bookkit.i18n_nodes"
# The branch that holds the Chinese notebooks (bookkit.i18n_notebooks), published by the GitHub
# workflow from what make test built: the Chinese site's Colab and Binder buttons open it.
ZH_NOTEBOOKS_BRANCH = "zh-notebooks"
# The Chinese site's title and author (the English ones are in _config.yml); the student edition's
# title adds the same note as the English one, "学生版" (bookkit.student_edition).
TITLE = "注意力中的位置"
AUTHOR = "《注意力中的位置》编写组"
STUDENT_NOTE = "学生版"
# The glossary lists its own alternative Chinese forms on purpose.
GLOSSARY_DOCUMENT = "book/glossary"

ROLE = re.compile(r"(?<!`)\{(?P<role>[\w:.-]+)\}`(?P<content>[^`]*)`")
INLINE_CODE = re.compile(r"`[^`]+`")
INLINE_MATH = re.compile(r"(?<!\$)\$(?!\$)[^$]+?(?<!\\)\$")
EXPLICIT_TARGET = re.compile(r"<([^<>]+)>\s*$")
CJK = re.compile(r"[\u3400-\u9fff]")
CJK_WORD = re.compile(r"[\u3400-\u9fff]+")
# A term that is an abbreviation of the entry's other term (RoPE, PI) takes no Chinese form of its own.
ACRONYM = re.compile(r"[A-Za-z]*[A-Z][A-Za-z]*[A-Z][A-Za-z]*")
# Roles whose content is shown as written (a glued value, a formula): it must stay identical.
VERBATIM_ROLES = ("glue", "math", "eq")


@dataclass(frozen=True)
class Problem:
    """One message of one document that the Chinese edition does not yet carry correctly."""

    document: str
    message: str
    reason: str

    def __str__(self) -> str:
        english = " ".join(self.message.split())
        if len(english) > 160:
            english = english[:157] + "..."
        return f"{self.document}: {self.reason}\n    English: {english}"


@dataclass(frozen=True)
class GlossaryForms:
    """A glossary entry's Chinese: the form translations use, and the others they must not."""

    terms: tuple[str, ...]
    preferred: tuple[str, ...]
    alternatives: tuple[str, ...]


# ---- the gettext build's configuration -----------------------------------------------------------


def gettext_config(config: dict, root: Path) -> dict:
    """The book's Jupyter Book configuration, changed for message extraction.

    Args:
        config: the parsed ``_config.yml``.
        root: the book's root folder, against which the local extensions' paths are resolved (the
            configuration is written elsewhere, and Jupyter Book resolves them against its folder).

    Returns:
        A new configuration: execution off (extraction reads the sources, it runs nothing), one
        catalog per document (``gettext_compact`` off), no per-build message ids, and the
        extension :mod:`bookkit.i18n_sphinx` (the text Sphinx alone would not extract).

    Raises:
        TypeError: if ``config`` is not a mapping.
    """
    if not isinstance(config, dict):
        raise TypeError(f"config must be the mapping of _config.yml, got {type(config).__name__}")
    changed = dict(config)
    changed["execute"] = {**config.get("execute", {}), "execute_notebooks": "off"}
    sphinx = dict(config.get("sphinx", {}))
    sphinx["local_extensions"] = {
        **{name: str((root / path).resolve()) for name, path in sphinx.get("local_extensions", {}).items()},
        # the table cells, exercise titles, figure captions and alt texts Sphinx would miss
        EXTENSION: str((root / "tools").resolve()),
    }
    sphinx["config"] = {**sphinx.get("config", {}), "gettext_compact": False, "gettext_uuid": False}
    changed["sphinx"] = sphinx
    return changed


def write_gettext_config(output: Path, root: Path = ROOT) -> Path:
    config = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(yaml.safe_dump(gettext_config(config, root), allow_unicode=True), encoding="utf-8")
    return output


def chinese_config(
    config: dict,
    root: Path,
    cache: Path,
    locale_dir: Path | None = None,
    search_words: Path | None = None,
    *,
    student: bool = False,
) -> dict:
    """The book's configuration for the Chinese site, built from the English build's executed notebooks.

    Args:
        config: the parsed ``_config.yml`` (the student edition's, for its Chinese site).
        root: the book's root folder (the student edition's sources, for its Chinese site).
        cache: the English build's execution cache (``_build/.jupyter_cache``): the Chinese build
            takes every notebook's outputs from it and executes nothing (see :func:`uncached`).
        locale_dir: the catalogs' folder, ``<root>/locale`` by default.
        search_words: a jieba dictionary of the book's terms (:func:`write_search_words`), so that
            the search index keeps 位置编码 or 外推 whole; jieba's own dictionary alone if ``None``.
        student: the student edition's Chinese site (its title says so, as the English one does).

    Returns:
        A new configuration: ``language = zh_CN`` (the theme's own words in Chinese), the catalogs
        of ``locale/`` (one per document, as :func:`gettext_config` extracts them), execution from
        the English cache, Chinese search (Sphinx indexes the words jieba cuts the text into;
        without jieba, its Chinese index holds no Chinese at all), and launch buttons that open the
        Chinese notebooks on the branch :data:`ZH_NOTEBOOKS_BRANCH`.
    """
    changed = gettext_config(config, root)
    changed["execute"] = {**config.get("execute", {}), "execute_notebooks": "cache", "cache": str(cache.resolve())}
    # the glued values of the translated paragraphs, their nodes saved with their page, and a
    # search language that indexes in seconds
    for extension in (GLUE_EXTENSION, NODES_EXTENSION, SEARCH_EXTENSION):
        changed["sphinx"]["local_extensions"][extension] = str((root / "tools").resolve())
    changed["sphinx"]["config"] = {
        **changed["sphinx"]["config"],
        "language": LANGUAGE,
        "locale_dirs": [str((locale_dir or root / "locale").resolve())],
        "html_search_language": "zh",
        **({"html_search_options": {"dict": str(search_words.resolve())}} if search_words else {}),
    }
    changed["title"] = f"{TITLE}（{STUDENT_NOTE}）" if student else TITLE
    changed["author"] = AUTHOR
    changed["repository"] = {**config["repository"], "branch": ZH_NOTEBOOKS_BRANCH}
    return changed


def search_words(glossary: Path = GLOSSARY) -> list[str]:
    """Every Chinese form of the glossary's terms that jieba can take as one word (no space, no Latin)."""
    forms = {form for entry in glossary_forms(glossary) for form in (*entry.preferred, *entry.alternatives)}
    return sorted(form for form in forms if CJK_WORD.fullmatch(form))


def write_search_words(output: Path, glossary: Path = GLOSSARY) -> Path:
    """The glossary's Chinese terms as a jieba user dictionary, one word a line (jieba picks the frequency)."""
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text("".join(f"{word}\n" for word in search_words(glossary)), encoding="utf-8")
    return output


def uncached(cache: Path, notebooks: Iterable[Path]) -> list[Path]:
    """The notebooks whose code has no executed record in ``cache`` (the Chinese build would run them)."""
    import nbformat
    from jupyter_cache import get_cache  # type: ignore[import-untyped]

    if not (cache / "global.db").exists():
        return list(notebooks)
    store = get_cache(cache)
    missing = []
    for path in notebooks:
        try:
            store.match_cache_notebook(nbformat.read(path, as_version=4))
        except KeyError:
            missing.append(path)
    return missing


# ---- the glossary's Chinese forms ----------------------------------------------------------------


def _strip_notes(text: str) -> str:
    """A Chinese-forms line without its parenthetical notes (full-width or ASCII)."""
    previous = None
    while previous != text:
        previous = text
        text = re.sub(r"（[^（）]*）|\([^()]*\)", "", text)
    return text


def _groups(chinese: str) -> list[str]:
    """A Chinese-forms line split at ``；`` outside parenthetical notes."""
    groups, depth, current = [], 0, ""
    for char in chinese:
        depth += char in "（("
        depth -= char in "）)"
        if char == "；" and depth == 0:
            groups.append(current)
            current = ""
        else:
            current += char
    return [*groups, current]


def parse_forms(terms: Sequence[str], chinese: str) -> GlossaryForms:
    """The Chinese forms of one glossary entry, from its ``**Chinese:**`` line.

    Groups are separated by ``；``, forms within a group by ``、``. The first group names the entry's
    terms: its first form is preferred, and with several terms (``context window``, ``context
    length``) the first forms go to them in order. A later group names a related notion (``置换矩阵``)
    whose first form is preferred too, unless the group is marked as another author's name for the
    term (``苏剑林的叫法``), which a translation does not use. Every other CJK form is an alternative;
    Latin forms (``token``, ``softmax``) are never flagged, since English terms are common in Chinese
    writing.

    Raises:
        ValueError: if the line names no Chinese form.
    """
    if not terms:
        raise ValueError("a glossary entry needs at least one term")
    named = [t for t in terms if not ACRONYM.fullmatch(t)] or list(terms)
    preferred: list[str] = []
    alternatives: list[str] = []
    for index, group in enumerate(_groups(chinese)):
        someone_elses = "的叫法" in group
        forms = [f.strip() for f in _strip_notes(group).split("、")]
        forms = [re.sub(r"^(也常直接写作|也作)", "", f).strip() for f in forms if f.strip()]
        if index == 0:
            keep = len(named)
        else:  # a related notion (置换矩阵 after 置换), not a synonym under another script or author
            keep = 0 if someone_elses or not any(p in forms[0] for p in preferred[:1]) else 1
        preferred += forms[:keep]
        alternatives += forms[keep:]
    if not preferred:
        raise ValueError(f"the glossary entry {terms[0]!r} names no Chinese form: {chinese!r}")
    flagged = [
        form
        for form in alternatives
        if CJK.search(form) and form not in preferred and not any(p in form for p in preferred)
    ]
    return GlossaryForms(tuple(terms), tuple(preferred), tuple(flagged))


def glossary_forms(path: Path = GLOSSARY) -> list[GlossaryForms]:
    """Every entry of the glossary's ``{glossary}`` block with its Chinese forms."""
    entries: list[GlossaryForms] = []
    terms: list[str] = []
    inside = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("```{glossary}"):
            inside = True
        elif inside and line.startswith("```"):
            inside = False
        elif inside and line and not line[0].isspace():
            terms.append(line.strip())
        elif inside and line.strip().startswith("**Chinese:**"):
            entries.append(parse_forms(terms, line.strip().removeprefix("**Chinese:**").strip()))
            terms = []
    if not entries:
        raise ValueError(f"{path} has no glossary entry with a **Chinese:** line")
    return entries


# ---- checking a translation ----------------------------------------------------------------------


def protected_parts(text: str) -> Counter[str]:
    """What a translation keeps as it is: role targets, verbatim role contents, math and code."""
    parts: Counter[str] = Counter()
    for match in ROLE.finditer(text):
        role, content = match["role"], match["content"]
        if role.startswith(VERBATIM_ROLES):
            parts[f"{{{role}}}`{content}`"] += 1
            continue
        target = EXPLICIT_TARGET.search(content)
        parts[f"{{{role}}} target {(target[1] if target else content).strip()}"] += 1
    rest = ROLE.sub(" ", text)
    parts.update(f"code {m.strip()}" for m in INLINE_CODE.findall(rest))
    rest = INLINE_CODE.sub(" ", rest)
    parts.update(f"math {m}" for m in INLINE_MATH.findall(rest))
    return parts


def glossary_problems(document: str, english: str, chinese: str, entries: Iterable[GlossaryForms]) -> list[Problem]:
    """A translated message's uses of a glossary term's non-preferred Chinese forms."""
    entries = list(entries)
    preferred = {p for e in entries for p in e.preferred}
    problems = []
    for entry in entries:
        for alternative in entry.alternatives:
            # 注意力池 inside a longer preferred form of another term would not be a use of it
            masked = chinese
            for form in sorted((p for p in preferred if alternative in p), key=len, reverse=True):
                masked = masked.replace(form, "\0")
            if alternative in masked:
                problems.append(Problem(document, english, f"uses {alternative!r} for the glossary term "
                                        f"{entry.terms[0]!r}; the book's form is {entry.preferred[0]!r}"))
    return problems


def message_problems(
    document: str, english: str, catalog: Catalog | None, entries: Sequence[GlossaryForms]
) -> list[Problem]:
    """Why one English message has no correct current translation in ``catalog`` (empty if it has)."""
    message = catalog.get(english) if catalog is not None else None
    if message is None or not message.string:
        return [Problem(document, english, "no Chinese translation")]
    if message.fuzzy:
        return [Problem(document, english, "the Chinese translation is fuzzy (the English changed since)")]
    chinese = message.string if isinstance(message.string, str) else message.string[0]
    problems = []
    kept, translated = protected_parts(english), protected_parts(chinese)
    lost, added = kept - translated, translated - kept
    if lost or added:
        problems.append(Problem(document, english, "the translation changes what it must keep: "
                                f"missing {sorted(lost)}, added {sorted(added)}"))
    if document != GLOSSARY_DOCUMENT:
        problems += glossary_problems(document, english, chinese, entries)
    return problems


def load(path: Path) -> Catalog:
    with path.open("rb") as file:
        return read_po(file, locale=LANGUAGE)


def english_messages(path: Path) -> list[str]:
    """The message ids of a template or catalog, in order, without the header and obsolete ones."""
    return [m.id for m in load(path) if m.id and isinstance(m.id, str)]


def check(
    locale_dir: Path = LOCALE_DIR,
    pot_dir: Path | None = None,
    only: Sequence[str] = (),
    glossary: Path = GLOSSARY,
) -> list[Problem]:
    """Every problem of the Chinese catalogs against the English.

    Args:
        locale_dir: the folder holding ``zh_CN/LC_MESSAGES/<document>.po``.
        pot_dir: the templates of a fresh extraction (the current English); without it, the
            catalogs' own message ids stand for the English.
        only: documents to check (``book/intro``); all of them if empty.
        glossary: the glossary that gives each term's Chinese forms.

    Returns:
        The problems, document by document, in message order.

    Raises:
        ValueError: if a document of ``only`` has neither a template nor a catalog.
    """
    catalogs = locale_dir / LANGUAGE / "LC_MESSAGES"
    source, suffix = (pot_dir, ".pot") if pot_dir is not None else (catalogs, ".po")
    documents = {p.relative_to(source).with_suffix("").as_posix(): p for p in sorted(source.rglob(f"*{suffix}"))}
    for document in ENGLISH_ONLY:
        documents.pop(document, None)
    unknown = sorted(set(only) - set(documents))
    if unknown:
        raise ValueError(f"no {suffix} file for {unknown} in {source}; known: {sorted(documents)}")
    entries = glossary_forms(glossary)
    problems = []
    for document, path in documents.items():
        if only and document not in only:
            continue
        po = catalogs / f"{document}.po"
        catalog = load(po) if po.exists() else None
        for english in english_messages(path):
            problems += message_problems(document, english, catalog, entries)
    return problems


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bookkit.i18n", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    config = commands.add_parser("config", help="write the gettext build's _config.yml")
    config.add_argument("output", type=Path)
    chinese = commands.add_parser("zh-config", help="write the Chinese site's _config.yml")
    chinese.add_argument("output", type=Path)
    chinese.add_argument("--cache", type=Path, required=True, help="the English build's execution cache")
    chinese.add_argument("--locale", type=Path, default=LOCALE_DIR, help="the catalogs (default: locale/)")
    chinese.add_argument(
        "--source", type=Path, default=ROOT,
        help="the English sources built (default: the book; the student edition's: _build/student/source)",
    )
    chinese.add_argument("--edition", choices=("full", "student"), default="full")
    unflagger = commands.add_parser(
        "unflag", help="drop Babel's format-string flags and obsolete duplicates of current messages from the catalogs"
    )
    unflagger.add_argument("locale", type=Path, nargs="?", default=LOCALE_DIR)
    checker = commands.add_parser("check", help="fail on an English message with no current translation")
    checker.add_argument("--pot", type=Path, help="templates of a fresh extraction (the current English)")
    checker.add_argument("--locale", type=Path, default=LOCALE_DIR)
    checker.add_argument("--only", nargs="*", default=[], help="documents to check, e.g. book/intro")
    checker.add_argument("--translated", action="store_true", help="check the documents in TRANSLATED")
    args = parser.parse_args(argv)
    if args.command == "config":
        print(f"gettext configuration written to {write_gettext_config(args.output)}")
        return 0
    if args.command == "unflag":
        changed = unflag(args.locale)
        print(f"format-string flags and obsolete duplicates dropped from {len(changed)} catalogs in {args.locale}")
        return 0
    if args.command == "zh-config":
        source = args.source.resolve()
        missing = uncached(args.cache, sorted((source / "notebooks").glob("*.ipynb")))
        if missing:
            print(f"not executed in {args.cache} (build the English {args.edition} edition first): "
                  f"{[p.name for p in missing]}", file=sys.stderr)
            return 1
        config = yaml.safe_load((source / "_config.yml").read_text(encoding="utf-8"))
        args.output.parent.mkdir(parents=True, exist_ok=True)
        words = write_search_words(args.output.parent / "search_words.txt")
        zh_config = chinese_config(config, source, args.cache, args.locale, words, student=args.edition == "student")
        text = yaml.safe_dump(zh_config, allow_unicode=True)
        args.output.write_text(text, encoding="utf-8")
        print(f"Chinese configuration written to {args.output}")
        return 0
    only = [*args.only, *(TRANSLATED if args.translated else ())]
    problems = check(args.locale, args.pot, only)
    for problem in problems:
        print(problem)
    scope = ", ".join(only) if only else "every document"
    if problems:
        documents = Counter(p.document for p in problems)
        print(f"\n{len(problems)} messages without a current Chinese translation ({scope}):", file=sys.stderr)
        for document, count in sorted(documents.items()):
            print(f"  {document}: {count}", file=sys.stderr)
        return 1
    print(f"every message has a current Chinese translation ({scope})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
