"""bookkit: the build tooling of *Position in Attention* (not the reader-facing ``posenc``).

Installed into the book's environment by ``make env`` (``pip install --no-deps -e tools``), so
the Sphinx build, the Makefile's targets and the tests import it the same way, with no
``sys.path`` edits:

- :mod:`bookkit.exercise_catalog`: the exercises read from the chapter notebooks (a Sphinx
  extension: the exercise index and the study plan; and solution stripping);
- :mod:`bookkit.notebook_hygiene`: notebooks without outputs, each opening with the bootstrap
  cell (``make fix-notebooks``);
- :mod:`bookkit.student_edition`: the sources of the student edition (``make student``);
- :mod:`bookkit.pdf`: the PDF editions (``make pdf``);
- :mod:`bookkit.assignments`: the nbgrader course (``make assignments``).
"""
