"""bookkit: the build tooling of *Position in Attention* (not the reader-facing ``posenc``).

Installed into the book's environment by ``make env`` (``pip install --no-deps -e tools``), so
the Sphinx build, ``scripts/`` and the tests import it the same way:

- :mod:`bookkit.exercise_catalog`: the exercises read from the chapter notebooks (a Sphinx
  extension: the exercise index, the study plan; and solution stripping for the student edition);
- :mod:`bookkit.pdf`: the PDF editions (``make pdf``);
- :mod:`bookkit.assignments`: the nbgrader course directory (``make assignments``).
"""
