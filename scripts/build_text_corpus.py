"""Build the character-level corpus of ``posenc.corpus`` from a CPython standard library (run once).

The corpus is every third top-level ``*.py`` module of the standard library, in sorted order
(packages and tests excluded), stored as one gzip-compressed JSON object ``{"python": version,
"files": [[name, text], ...]}`` with a fixed gzip timestamp, so the same standard library always
gives the same bytes. The PSF license of those files is copied beside the archive. The printed
sha256 (of the uncompressed JSON) goes into ``posenc.corpus.CORPUS_SHA256``.

    python scripts/build_text_corpus.py [STDLIB_DIR]
"""

from __future__ import annotations

import gzip
import hashlib
import json
import platform
import shutil
import sys
import sysconfig
from pathlib import Path

TARGET = Path(__file__).resolve().parents[1] / "src" / "posenc" / "corpus_data"


def main() -> None:
    stdlib = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(sysconfig.get_paths()["stdlib"])
    modules = sorted(stdlib.glob("*.py"))[::3]
    files = [[path.name, path.read_text(encoding="utf-8")] for path in modules]
    payload = json.dumps({"python": platform.python_version(), "files": files}, sort_keys=True).encode()
    TARGET.mkdir(exist_ok=True)
    with open(TARGET / "stdlib.json.gz", "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0,
                                                                     filename="") as archive:
        archive.write(payload)
    shutil.copyfile(stdlib / "LICENSE.txt", TARGET / "LICENSE-PSF.txt")
    characters = sum(len(text) for _, text in files)
    print(f"{len(files)} files, {characters} characters, sha256 {hashlib.sha256(payload).hexdigest()}")


if __name__ == "__main__":
    main()
