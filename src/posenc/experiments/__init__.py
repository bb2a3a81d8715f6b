"""A small training kit: synthetic tasks, a tiny causal transformer, training, evaluation.

Chapter 8 trains one tiny model per position scheme and measures what each does beyond the
length it was trained on; chapter 9 reuses the trained RoPE models. Everything here runs on a
CPU in seconds (and on a GPU if one is present), is seeded, and caches trained weights on disk.

One module per idea; every public name is importable from ``posenc.experiments`` itself:

- :mod:`posenc.experiments.config`: what a run trains (:class:`~posenc.experiments.config.TrainConfig`)
  and when it stops (:class:`~posenc.experiments.config.StopRule`);
- :mod:`posenc.experiments.tasks`: the synthetic tasks and the positions of a batch;
- :mod:`posenc.experiments.model`: the tiny causal transformer;
- :mod:`posenc.experiments.training`: the training loop, the stopping rule's check, the weight cache;
- :mod:`posenc.experiments.evaluation`: accuracy and loss by length and by position, attention entropy.
"""

# The `name as name` imports re-export private helpers: the model store's fingerprint of the training
# code (posenc.store.provenance) names them through this package, and posenc.corpus, whose source it
# hashes whole, imports _optimise from here. Moved out of posenc.experiments, they would make every
# shipped model stale.
from .config import SCHEDULES, TASKS, StopRule, TrainConfig
from .evaluation import _EVALUATION_SEED as _EVALUATION_SEED
from .evaluation import (
    Evaluation,
    accuracy_by_position,
    attention_entropy,
    band_means,
    evaluate,
    evaluate_by_position,
    far_key_mask,
    logits_with_key_masks,
    mean_over_bands,
)
from .evaluation import _per_token as _per_token
from .model import BEYOND_TABLE, TinyCausalLM, build_model
from .model import _Block as _Block
from .tasks import _MARKOV_SEED as _MARKOV_SEED
from .tasks import IGNORE, make_batch, markov_transitions, sample_positions
from .training import _HELDOUT_SEED as _HELDOUT_SEED
from .training import TrainingRun, cache_path, heldout_batch, train, train_or_load
from .training import _accuracy_on as _accuracy_on
from .training import _on as _on
from .training import _optimise as _optimise

__all__ = [
    "BEYOND_TABLE",
    "IGNORE",
    "TASKS",
    "SCHEDULES",
    "Evaluation",
    "StopRule",
    "TinyCausalLM",
    "TrainConfig",
    "TrainingRun",
    "accuracy_by_position",
    "attention_entropy",
    "band_means",
    "build_model",
    "cache_path",
    "evaluate",
    "evaluate_by_position",
    "far_key_mask",
    "heldout_batch",
    "logits_with_key_masks",
    "make_batch",
    "markov_transitions",
    "mean_over_bands",
    "sample_positions",
    "train",
    "train_or_load",
]
