"""Measurements the chapters make on encodings, layers and trained models, each tested.

The chapters derive what they teach in the open; what they only *measure* (a quantity over seeds,
a reading of a trained model, a table of costs) lives here, one module per topic, so that a page
shows one call and each measurement is tested against an independent computation:

- :mod:`posenc.measure.tables`: position tables (energy in another table's principal span,
  decoding errors, distance to the training rows; chapters 2 and 3)
- :mod:`posenc.measure.toeplitz`: how far a score matrix is from a function of the offset
  (chapter 3)
- :mod:`posenc.measure.lookback`: readings of the trained look-back models (chapter 4)
- :mod:`posenc.measure.cost`: parameters and memory of each position method (chapter 4)
- :mod:`posenc.measure.t5`: the position bias a ``transformers`` T5 stack hands each layer
  (chapter 4)
- :mod:`posenc.measure.rotary`: RoPE's implementations and libraries compared (chapter 6)
- :mod:`posenc.measure.longrange`: RoPE at long range and in low precision (chapter 7)

Import a module, not the package: ``from posenc.measure import longrange``.
"""
