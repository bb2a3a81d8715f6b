"""The catalogs tidied after ``sphinx-intl update`` (``make i18n``): what Babel and sphinx-intl leave.

    python -m bookkit.i18n unflag locale

Two things, each of which makes ``msgfmt -c`` (and the PO editors that use it) reject a correct
catalog: Babel's format-string flags on messages that are MyST text, and the obsolete entry that
sphinx-intl leaves beside a message that came back. Every other line of a catalog is left as it is.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path

from babel.messages.pofile import denormalize, normalize, read_po

# Babel flags a message that looks like a Python format string: "25 % of" holds "% o", a
# conversion, and "{numref}`fig`" a replacement field. The book's messages are MyST text, never
# format strings, and with the flag `msgfmt -c` (and PO editors that use it) rejects a correct
# translation such as "前 25% 的坐标". What a translation must keep is checked by
# `bookkit.i18n check` instead.
FORMAT_FLAGS = ("python-format", "python-brace-format")


def drop_format_flags(text: str) -> str:
    """A catalog's text without Babel's format-string flags; every other flag and line unchanged."""
    lines = []
    for line in text.splitlines(keepends=True):
        if line.startswith("#,"):
            flags = [flag.strip() for flag in line[2:].split(",")]
            kept = [flag for flag in flags if flag and flag not in FORMAT_FLAGS]
            if not kept:
                continue
            line = "#, " + ", ".join(kept) + "\n"
        lines.append(line)
    return "".join(lines)


def _field(lines: Sequence[str], keyword: str) -> str | None:
    """The value of an entry's ``msgid`` or ``msgstr``, its continuation lines joined; ``None`` if absent."""
    parts, inside = [], False
    for line in lines:
        if line.startswith(f"{keyword} "):
            inside = True
            parts.append(line.removeprefix(f"{keyword} "))
        elif inside and line.startswith('"'):
            parts.append(line)
        else:
            inside = False
    return denormalize("\n".join(parts)) if parts else None


def _is_fuzzy(lines: Sequence[str]) -> bool:
    return any(line.startswith("#,") and "fuzzy" in line[2:].replace(" ", "").split(",") for line in lines)


def _obsolete(entry: str) -> tuple[str, str] | None:
    """``(msgid, msgstr)`` of an obsolete catalog entry (every line ``#~`` or a comment), else ``None``."""
    lines = [line for line in entry.splitlines() if line.strip()]
    if not any(line.startswith("#~ ") for line in lines) or any(not line.startswith("#") for line in lines):
        return None
    fields = [line.removeprefix("#~ ") for line in lines if line.startswith("#~ ")]
    message, translation = _field(fields, "msgid"), _field(fields, "msgstr")
    if message is None:
        return None
    return message, "" if translation is None or _is_fuzzy(lines) else translation


def _revived(entry: str, translation: str) -> str:
    """A current entry with ``translation`` as its msgstr, no longer fuzzy, its previous msgid (``#|``) gone."""
    lines = []
    for line in entry.splitlines():
        if line.startswith("#|"):
            continue
        if line.startswith("#,"):
            flags = [flag.strip() for flag in line[2:].split(",") if flag.strip() and flag.strip() != "fuzzy"]
            if flags:
                lines.append("#, " + ", ".join(flags))
            continue
        lines.append(line)
    start = next(index for index, line in enumerate(lines) if line.startswith("msgstr "))
    end = start + 1
    while end < len(lines) and lines[end].startswith('"'):
        end += 1
    # written as Babel writes it with -w 0 (what sphinx-intl update -w 0 wrote): one line, or a
    # first empty line and one line per line of the message
    msgstr = normalize(translation, width=0).splitlines()
    lines[start:end] = [f"msgstr {msgstr[0]}", *msgstr[1:]]
    return "\n".join(lines) + ("\n" if entry.endswith("\n") else "")


def drop_obsolete_duplicates(text: str) -> str:
    """A catalog's text without the obsolete (``#~``) entries whose message is current again.

    When a message disappears from the English, ``sphinx-intl update`` keeps its translation as an
    obsolete entry; when the message comes back, it adds it again as a new, untranslated message
    and leaves the obsolete entry in place, and ``msgfmt -c`` rejects the catalog for its duplicate
    message definition. The obsolete entry is dropped, and its translation, made for the same
    English, goes to the current message if that has none or only a fuzzy suggestion (as GNU
    ``msgmerge`` revives an obsolete entry). Every other entry is unchanged.
    """
    current = {message.id: message for message in read_po(io.StringIO(text)) if message.id}
    entries = text.split("\n\n")
    returned = {}
    kept = []
    for entry in entries:
        obsolete = _obsolete(entry)
        if obsolete is not None and obsolete[0] in current:
            returned[obsolete[0]] = obsolete[1]
        else:
            kept.append(entry)
    if not returned:
        return text
    revived = []
    for entry in kept:
        lines = entry.splitlines()
        message = _field(lines, "msgid") if not entry.lstrip().startswith("#~") else None
        translation = returned.get(message or "")
        if translation and (_field(lines, "msgstr") == "" or _is_fuzzy(lines)):
            entry = _revived(entry, translation)
        revived.append(entry)
    clean = "\n\n".join(revived)
    return clean if clean.endswith("\n") else clean + "\n"


def unflag(locale_dir: Path) -> list[Path]:
    """Drop the format-string flags and the obsolete duplicates of current messages
    (:func:`drop_obsolete_duplicates`) from every catalog under ``locale_dir``; the catalogs changed."""
    changed = []
    for path in sorted(locale_dir.rglob("*.po")):
        text = path.read_text(encoding="utf-8")
        clean = drop_obsolete_duplicates(drop_format_flags(text))
        if clean != text:
            path.write_text(clean, encoding="utf-8")
            changed.append(path)
    return changed
