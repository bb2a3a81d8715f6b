"""Multi-head self-attention with a pluggable position scheme.

Shape legend:
    - ``L``: sequence length
    - ``D``: model (embedding) dimension
    - ``h``: number of heads; ``d = D / h``: head dimension
"""

from __future__ import annotations

import torch
from torch import nn

from ._validation import check_choice, check_floating, check_int, check_tensor
from .absolute import LearnedPositionalEmbedding, SinusoidalPositionalEncoding
from .attention import causal_mask, scaled_dot_product_attention
from .relative import (
    RelativePositionEmbedding,
    T5RelativePositionBias,
    alibi_bias,
    shaw_attention,
)
from .rotary import RotaryEmbedding

__all__ = ["POSITION_SCHEMES", "MultiHeadSelfAttention"]

POSITION_SCHEMES = ("none", "sinusoidal", "learned", "shaw", "t5", "alibi", "rope")
"""Position schemes that :class:`MultiHeadSelfAttention` can plug in."""


class MultiHeadSelfAttention(nn.Module):
    """Multi-head self-attention with a pluggable position scheme.

    ``position`` chooses how (and whether) token order reaches the scores:

    ============== ======================================================================
    ``none``       no positional information (permutation-equivariant)
    ``sinusoidal`` fixed sinusoidal encoding added to the inputs (Vaswani et al.)
    ``learned``    learned absolute embedding added to the inputs (``max_len`` positions)
    ``shaw``       learned relative key and value embeddings, clipped at ``max_distance``
    ``t5``         learned bucketed relative bias per head (T5)
    ``alibi``      fixed linear distance penalty per head (ALiBi)
    ``rope``       rotary embedding of queries and keys (RoFormer)
    ============== ======================================================================

    ``sinusoidal`` and ``learned`` add their encoding to this layer's input. That is the
    original Transformer for a single layer; in a stack, the encoding belongs at the input of
    the first layer only, so build the later layers with ``position="none"``.

    Args:
        embed_dim: model dimension ``D``; must be divisible by ``num_heads``.
        num_heads: number of heads ``h`` (>= 1).
        position: one of :data:`POSITION_SCHEMES`.
        max_len: number of positions of the ``learned`` table.
        max_distance: for ``shaw``, the clipping distance (default 16); for ``t5``, the
            distance from which all keys share the last bucket (default 128, as in T5).
        num_buckets: number of ``t5`` buckets.
        bidirectional: whether ``t5`` buckets distinguish keys before and after the query.
        base: base of the ``sinusoidal`` and ``rope`` frequencies.
        rope_layout: ``"interleaved"`` or ``"half"`` pairing for ``rope``.

    Shapes:
        ``forward(x)`` takes ``x`` of shape ``(..., L, D)`` and returns ``(output, weights)`` with
        ``output`` ``(..., L, D)`` and ``weights`` ``(..., h, L, L)``.

    Raises:
        ValueError: if a dimension or count is invalid or ``position`` is unknown.
    """

    def __init__(
        self,
        embed_dim: int,
        num_heads: int,
        *,
        position: str = "none",
        max_len: int = 512,
        max_distance: int | None = None,
        num_buckets: int = 32,
        bidirectional: bool = True,
        base: float = 10000.0,
        rope_layout: str = "interleaved",
    ) -> None:
        super().__init__()
        self.embed_dim = check_int("embed_dim", embed_dim, minimum=1)
        self.num_heads = check_int("num_heads", num_heads, minimum=1)
        if embed_dim % num_heads:
            raise ValueError(
                f"embed_dim must be divisible by num_heads, got embed_dim={embed_dim} and num_heads={num_heads}"
            )
        self.head_dim = embed_dim // num_heads
        self.position = check_choice("position", position, POSITION_SCHEMES)
        self.qkv = nn.Linear(embed_dim, 3 * embed_dim)
        self.out = nn.Linear(embed_dim, embed_dim)

        self.input_encoding: nn.Module | None = None
        self.relative_keys: nn.Module | None = None
        self.relative_values: nn.Module | None = None
        self.relative_bias: nn.Module | None = None
        self.rotary: nn.Module | None = None
        if position == "sinusoidal":
            self.input_encoding = SinusoidalPositionalEncoding(embed_dim, base=base)
        elif position == "learned":
            self.input_encoding = LearnedPositionalEmbedding(max_len, embed_dim)
        elif position == "shaw":
            distance = 16 if max_distance is None else max_distance
            self.relative_keys = RelativePositionEmbedding(distance, self.head_dim)
            self.relative_values = RelativePositionEmbedding(distance, self.head_dim)
        elif position == "t5":
            distance = 128 if max_distance is None else max_distance
            self.relative_bias = T5RelativePositionBias(
                num_heads, num_buckets=num_buckets, max_distance=distance, bidirectional=bidirectional
            )
        elif position == "rope":
            self.rotary = RotaryEmbedding(self.head_dim, base=base, layout=rope_layout)

    def forward(
        self, x: torch.Tensor, mask: torch.Tensor | None = None, *, causal: bool = False
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Attend over the sequence ``x``.

        Args:
            x: ``(..., L, D)`` token representations.
            mask: optional boolean mask broadcastable to ``(..., h, L, L)``; True = may attend.
            causal: if True, also apply :func:`~posenc.attention.causal_mask`.

        Returns:
            ``(output, weights)``: ``(..., L, D)`` and ``(..., h, L, L)``.

        Raises:
            ValueError: if the last dimension of ``x`` is not ``embed_dim``.
        """
        x = check_floating("x", check_tensor("x", x, min_dim=2))
        if x.shape[-1] != self.embed_dim:
            raise ValueError(f"x must have last dimension embed_dim={self.embed_dim}, got shape {tuple(x.shape)}")
        seq_len = x.shape[-2]
        if self.input_encoding is not None:
            x = self.input_encoding(x)
        q, k, v = (self._split_heads(t) for t in self.qkv(x).chunk(3, dim=-1))
        if causal:
            causal_part = causal_mask(seq_len, device=x.device)
            mask = causal_part if mask is None else mask & causal_part
        bias = None
        if self.relative_bias is not None:
            bias = self.relative_bias(seq_len, seq_len)
        elif self.position == "alibi":
            bias = alibi_bias(self.num_heads, seq_len).to(x.device, x.dtype)
        if self.rotary is not None:
            q, k = self.rotary(q), self.rotary(k)
        if self.relative_keys is not None and self.relative_values is not None:
            output, weights = shaw_attention(
                q,
                k,
                v,
                self.relative_keys(seq_len, seq_len),
                self.relative_values(seq_len, seq_len),
                mask=mask,
            )
        else:
            output, weights = scaled_dot_product_attention(q, k, v, mask=mask, bias=bias)
        return self.out(self._merge_heads(output)), weights

    def _split_heads(self, t: torch.Tensor) -> torch.Tensor:
        # (..., L, D) -> (..., h, L, d)
        return t.unflatten(-1, (self.num_heads, self.head_dim)).transpose(-3, -2)

    def _merge_heads(self, t: torch.Tensor) -> torch.Tensor:
        # (..., h, L, d) -> (..., L, D)
        return t.transpose(-3, -2).flatten(-2)
