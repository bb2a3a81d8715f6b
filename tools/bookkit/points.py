"""Points of a graded exercise by its difficulty (stars): what the nbgrader course
(:mod:`bookkit.assignments`) awards, and what the instructor guide's table of checked exercises
(:mod:`bookkit.exercise_catalog`) shows."""

from __future__ import annotations

#: Points of an exercise by its difficulty (stars); an exercise without a label counts as ★★.
POINTS = {1: 1, 2: 2, 3: 3}
DEFAULT_DIFFICULTY = 2
