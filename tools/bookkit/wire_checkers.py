"""Insert a checker cell after each coding exercise that has a checker but no starter cell yet.

For every exercise of :data:`STARTERS` this writes, right after the ``{exercise}`` block with that
label, a code cell tagged ``exercise-starter`` and ``remove-output``, in the style of the chapters'
existing starters: the import of the checker, a stub function that raises
``NotImplementedError`` (the student replaces that line), and the checker called on the stub. If
text follows the exercise in the same Markdown cell (its ``{solution-start}``, say), that cell is
split in two so the starter sits between the exercise and its solution, where
:mod:`bookkit.exercise_catalog` and :mod:`bookkit.assignments` look for it.

The script is idempotent: an exercise whose chapter already has a starter calling the checker is
skipped (a starter this script wrote, recognised by its id ``starter-<label>``, is brought up to
date), and new cells get ids derived from the label, so running it twice changes nothing. A
label that is not found is reported and skipped; the other exercises are still wired. Notebooks
are read and written as plain JSON (key order and formatting kept).

Usage:
    python -m bookkit.wire_checkers            # wire every chapter, report what was done
    python -m bookkit.wire_checkers --check    # report only; exit 1 if some starter is missing
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bookkit.exercise_catalog import STARTER_TAG

ROOT = Path(__file__).resolve().parents[2]  # tools/bookkit/ -> the repository
NOTEBOOKS = ROOT / "notebooks"
WIDTH = 79
"""The longest code line the book's code boxes show (``tests/test_notebooks.py``)."""


@dataclass(frozen=True)
class Starter:
    """The stub a student fills in for one exercise, and the checker that grades it."""

    label: str
    checker: str
    signature: str  # the function's name and parameters, e.g. "my_f(x, base=10000.0)"
    doc: str
    task: str  # what the NotImplementedError says is to be done

    @property
    def function(self) -> str:
        return self.signature.split("(", 1)[0]

    def source(self) -> str:
        """The cell's code, every line within the book's 79 columns."""
        doc = textwrap.wrap(self.doc, WIDTH - 7, break_on_hyphens=False)
        docstring = (f'    """{doc[0]}"""' if len(doc) == 1 else
                     "\n".join([f'    """{doc[0]}', *(f"    {line}" for line in doc[1:]), '    """']))
        message = f'"{self.label}: {self.task}"'
        raise_line = f"    raise NotImplementedError({message})"
        if len(raise_line) > WIDTH:
            raise_line = f"    raise NotImplementedError(\n        {message}\n    )"
        return (
            f"from posenc.exercises import {self.checker}\n\n\n"
            f"def {self.signature}:\n{docstring}\n{raise_line}\n\n\n"
            f"{self.checker}({self.function})"
        )


#: The exercises wired by this script (the others have hand-written starters in the chapters).
STARTERS = (
    Starter("ex-perm-2", "check_cross_attention", "my_cross_attention(y, z, w_q, w_k, w_v)",
            "softmax(y W_Q (z W_K)^T / sqrt(d_h)) z W_V, for y of shape (L_q, d) and z of shape (L_k, d).",
            "queries from y, keys and values from z"),
    Starter("ex-perm-5", "check_position_recovery", "my_recovered_positions(outputs)",
            "Positions i from outputs o_i close to 1/(i+1): the nearest integer to 1/o_i - 1, in float64.",
            "recover the positions here"),
    Starter("ex-abs-1", "check_position_parameter_counts", "my_parameter_counts(positions, width)",
            "(learned table, one-hot then one linear map, one-hot into Q, K and V): parts 1 to 3.",
            "return the three counts"),
    Starter("ex-abs-4", "check_decayed_rows", "my_decayed_rows(initial, lr, weight_decay, steps)",
            "The rows no gradient reaches after `steps` AdamW steps, from their initial values.",
            "apply part 1's formula here"),
    Starter("ex-sin-6", "check_concatenated_sinusoidal", "my_t2t_encoding(seq_len, dim, base=10000.0)",
            "Part 4: all sines, then all cosines, with theta_l = base^(-l / (d/2 - 1)), shape (seq_len, dim).",
            "build the concatenated table here"),
    Starter("ex-rel-4", "check_alibi_bias_from_slopes", "my_causal_alibi_bias(slopes, length)",
            "Part 1: the bias m_r (j - i) of every head r, shape (h, L, L), from the slopes alone.",
            "build the bias from the slopes"),
    Starter("ex-rel-8", "check_reversal_gap", "my_reversal_gap(layer, x)",
            "max |layer(x reversed) - layer(x) reversed| for x of shape (L, d); layer(x) has shape (L, d).",
            "measure the gap here"),
    Starter("ex-ropea-5", "check_unrotated_outputs", "my_turned_back(outputs, positions, base=10000.0)",
            "Turn output row i of outputs, shape (..., L, d), back by R_i^T (interleaved pairs).",
            "turn the outputs back here"),
    Starter("ex-ropea-6", "check_linear_rope_attention", "my_linear_rope_attention(q, k, v, base=10000.0)",
            "Causal linear attention with RoPE on phi(q), phi(k), phi = elu + 1, for inputs of shape (n, d).",
            "running sums over j <= i"),
    Starter("ex-ropeb-5", "check_decode_positions", "my_decode_positions(cache_len, num_new)",
            "The positions of num_new tokens decoded after cache_len cached ones.",
            "where does decoding start?"),
    Starter("ex-ropeb-9", "check_streaming_cache", "my_streaming_cache(cached, window, sinks=4)",
            "Keep the sinks and the last `window` keys of cached (..., n, d), renumbered by rotations only.",
            "rotate the cached keys here"),
    Starter("ex-ropeb-10", "check_rope_matrix_2d_blocks", "my_rope_matrix_2d_blocks(row, column, dim, base=10000.0)",
            "The (d, d) matrix: block l turns (4l, 4l+1) by row theta'_l, (4l+2, 4l+3) by column theta'_l.",
            "build the block matrix here"),
    Starter("ex-ropec-1", "check_slowest_wavelength", "my_slowest_wavelength(dim, base)",
            "The wavelength of the slowest pair of RoPE with head dimension dim and base `base`.",
            "compute the wavelength here"),
    Starter("ex-ropec-2", "check_expected_score", "my_expected_score(cross, offsets, base=10000.0)",
            "E[q^T R_delta k] for each offset, from the blocks cross[l] = E[q^(l) k^(l)T], shape (d/2, 2, 2).",
            "part 1's formula here"),
    Starter("ex-ropec-3", "check_score_asymmetry", "my_score_asymmetry(query, key, offsets, base=10000.0)",
            "s(delta) - s(-delta) for each offset, where s(delta) = q^T R_delta k.",
            "compute the difference here"),
    Starter("ex-ropec-5", "check_positional_head_query", "my_positional_query(key, target, base=10000.0)",
            "A query whose score q^T R_delta k over delta in [-500, 500] is largest at delta = target.",
            "build the query here"),
    Starter("ex-trained-2", "check_extended_rows", "my_rows_for(table, length, option)",
            'Rows for positions 0..length-1 from an (L, D) table: option "clip", "copy" or "interpolate".',
            "extend the table here"),
    Starter("ex-trained-3", "check_alibi_bias_at_positions", "my_alibi_bias_at(slopes, positions)",
            "ALiBi's bias -m_r |p_j - p_i| at real positions p, shape (h, L, L).",
            "build the bias here"),
)

_FENCE = re.compile(r"^ {0,3}(?P<fence>`{3,}|:{3,})\{exercise\}")


def _lines(source: Any) -> str:
    return "".join(source) if isinstance(source, list) else source


def _as_source(text: str) -> list[str]:
    """A cell source in the notebook's on-disk form: a list of lines keeping their newlines."""
    return text.splitlines(keepends=True)


def _closes(line: str, fence: str) -> bool:
    stripped = line.strip()
    return len(stripped) >= len(fence) and set(stripped) == {fence[0]}


def _exercise_end(text: str, label: str) -> int | None:
    """The index just after the closing fence of the ``{exercise}`` labelled ``label``, or None."""
    lines = text.splitlines(keepends=True)
    offset = 0
    index = 0
    while index < len(lines):
        match = _FENCE.match(lines[index])
        if match:
            fence = match["fence"]
            end = index + 1
            while end < len(lines) and not _closes(lines[end], fence):
                end += 1
            body = lines[index + 1 : end]
            if any(line.strip() == f":label: {label}" for line in body):
                return offset + sum(len(line) for line in lines[index : end + 1])
            offset += sum(len(line) for line in lines[index : end + 1])
            index = end + 1
            continue
        offset += len(lines[index])
        index += 1
    return None


def wire(notebook: dict[str, Any], starter: Starter) -> str:
    """Insert ``starter`` into ``notebook`` (in place); return what happened, in a few words."""
    cells = notebook["cells"]
    for cell in cells:
        if cell.get("id") == f"starter-{starter.label}":  # written by this script: keep it up to date
            if _lines(cell["source"]) == starter.source():
                return "present"
            cell["source"] = _as_source(starter.source())
            return "updated"
    for cell in cells:
        if cell["cell_type"] == "code" and STARTER_TAG in cell.get("metadata", {}).get("tags", []) and re.search(
            rf"\b{starter.checker}\(", _lines(cell["source"])
        ):
            return "present"
    for position, cell in enumerate(cells):
        if cell["cell_type"] != "markdown":
            continue
        text = _lines(cell["source"])
        end = _exercise_end(text, starter.label)
        if end is None:
            continue
        head, rest = text[:end].rstrip("\n"), text[end:].strip("\n")
        new_cells = [{
            "cell_type": "code",
            "execution_count": None,
            "id": f"starter-{starter.label}",
            "metadata": {"tags": [STARTER_TAG, "remove-output"]},
            "outputs": [],
            "source": _as_source(starter.source()),
        }]
        if rest:
            cell["source"] = _as_source(head)
            new_cells.append({
                "cell_type": "markdown",
                "id": f"after-{starter.label}",
                "metadata": {},
                "source": _as_source(rest),
            })
        cells[position + 1 : position + 1] = new_cells
        return "inserted" + (" (exercise cell split)" if rest else "")
    return "label missing"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="report only, exit 1 if a starter is missing")
    parser.add_argument("--notebooks", type=Path, default=NOTEBOOKS, help="the directory of the chapters")
    args = parser.parse_args(argv)
    paths = sorted(args.notebooks.glob("*.ipynb"))
    notebooks = {path: json.loads(path.read_text(encoding="utf-8")) for path in paths}
    missing = 0
    for starter in STARTERS:
        outcome = "label missing"
        for path, notebook in notebooks.items():
            if any(f":label: {starter.label}" in _lines(cell["source"]) for cell in notebook["cells"]
                   if cell["cell_type"] == "markdown"):
                if args.check:
                    present = any(
                        cell["cell_type"] == "code" and re.search(rf"\b{starter.checker}\(", _lines(cell["source"]))
                        for cell in notebook["cells"]
                    )
                    outcome = "present" if present else "missing"
                else:
                    outcome = wire(notebook, starter)
                print(f"{starter.label:<14} {starter.checker:<32} {path.name}: {outcome}")
                break
        else:
            print(f"{starter.label:<14} {starter.checker:<32} WARNING: no exercise with this label in any chapter; "
                  "skipped")
        missing += outcome in ("missing", "label missing")
    if not args.check:
        for path, notebook in notebooks.items():
            text = json.dumps(notebook, indent=1, ensure_ascii=False) + "\n"
            if text != path.read_text(encoding="utf-8"):
                path.write_text(text, encoding="utf-8")
    return 1 if args.check and missing else 0


if __name__ == "__main__":
    sys.exit(main())
