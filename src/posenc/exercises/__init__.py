r"""Auto-checkers for the coding exercises: run a student's function, diagnose its mistakes.

Each ``check_*`` function takes *your own* implementation of an exercise, runs it on hidden cases
(random inputs drawn from a private, seeded :class:`torch.Generator`, so the checker never touches
the global random state), compares it with the reference implementation of :mod:`posenc` and
tests properties the result must have. It returns a :class:`CheckResult`: true when everything
passed, and in every case a list of specific messages. A failed check says on which input your
function went wrong, what was expected and what it returned, and recognises the typical mistakes
(for instance sine and cosine swapped, a mask convention inverted or a rotation in the wrong
direction). The checker never raises because of your function: an exception inside it is
reported like a wrong answer.

In a notebook::

    from posenc.exercises import check_sinusoidal

    def my_encoding(seq_len, dim, base=10000.0):
        raise NotImplementedError  # replace this line with your code

    check_sinusoidal(my_encoding)        # displays the report
    assert check_sinusoidal(my_encoding)  # for autograding

Checkers:

- :func:`check_attention`: scaled dot-product attention with a boolean mask
- :func:`check_padded_positions`: RoBERTa-style position ids of a padded batch
- :func:`check_sinusoidal`: the sinusoidal encoding table
- :func:`check_shaw_index`: the rows of Shaw et al.'s table of clipped relative positions
- :func:`check_relative_shift`: Transformer-XL's relative shift ("skew"), with a memory
- :func:`check_t5_bucket`: T5's relative position buckets
- :func:`check_alibi_slopes`: ALiBi's per-head slopes
- :func:`check_apply_rope`: rotary position embedding
- :func:`check_repeat_kv`: key-value heads shared by query heads (grouped-query attention)
- :func:`check_apply_rope_2d`: axial two-dimensional RoPE on a grid of patches
- :func:`check_pi_frequencies`, :func:`check_ntk_frequencies`,
  :func:`check_dynamic_ntk_frequencies`, :func:`check_yarn_frequencies`,
  :func:`check_llama3_frequencies`: one per context-extension rule of Part V

The package is organised as one module of shared machinery, :mod:`posenc.exercises.checking`
(running the student's function, collecting and reporting problems), and one module per family
of checkers: :mod:`posenc.exercises.attention`, :mod:`posenc.exercises.absolute`,
:mod:`posenc.exercises.relative`, :mod:`posenc.exercises.rotary`,
:mod:`posenc.exercises.heads` and :mod:`posenc.exercises.scaling`. Import the checkers from
here: the family modules are an implementation detail and may be reorganised.
"""


# In the book's order, which is the order of the API reference (autodoc_member_order: bysource).
from .checking import CheckResult  # noqa: I001
from .attention import check_attention
from .absolute import check_padded_positions, check_sinusoidal
from .relative import check_shaw_index, check_relative_shift, check_t5_bucket, check_alibi_slopes
from .rotary import check_apply_rope
from .heads import check_repeat_kv
from .rotary import check_apply_rope_2d
from .scaling import (
    check_pi_frequencies,
    check_ntk_frequencies,
    check_dynamic_ntk_frequencies,
    check_yarn_frequencies,
    check_llama3_frequencies,
)

__all__ = [
    "CheckResult",
    "check_alibi_slopes",
    "check_apply_rope",
    "check_apply_rope_2d",
    "check_attention",
    "check_dynamic_ntk_frequencies",
    "check_llama3_frequencies",
    "check_ntk_frequencies",
    "check_padded_positions",
    "check_pi_frequencies",
    "check_relative_shift",
    "check_repeat_kv",
    "check_shaw_index",
    "check_sinusoidal",
    "check_t5_bucket",
    "check_yarn_frequencies",
]
