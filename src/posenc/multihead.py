"""Multi-head self-attention with a pluggable position scheme.

Shape legend:
    - ``L``: sequence length
    - ``D``: model (embedding) dimension
    - ``h``: number of heads; ``d = D / h``: head dimension
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from ._validation import check_choice, check_floating, check_int, check_tensor, resolve_sample_positions
from .absolute import LearnedPositionalEmbedding, SinusoidalPositionalEncoding
from .attention import causal_mask, scaled_dot_product_attention
from .relative import (
    RelativePositionEmbedding,
    T5RelativePositionBias,
    alibi_bias,
    alibi_slopes,
    relative_positions,
    shaw_attention,
    t5_relative_position_bucket,
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
        max_distance: for ``shaw``, the clipping distance (default 16); for ``t5``, the scale of
            the logarithmic buckets (default 128, as in T5): the last bucket starts earlier (see
            :func:`~posenc.relative.t5_relative_position_bucket`).
        num_buckets: number of ``t5`` buckets.
        bidirectional: whether ``t5`` buckets distinguish keys before and after the query.
        base: base of the ``sinusoidal`` and ``rope`` frequencies.
        rope_layout: ``"interleaved"`` or ``"half"`` pairing for ``rope``.

    Shapes:
        ``forward(x)`` takes ``x`` of shape ``(..., L, D)`` and returns ``(output, weights)`` with
        ``output`` ``(..., L, D)`` and ``weights`` ``(..., h, L, L)`` (``None`` with
        ``need_weights=False``).

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

        self.input_encoding: SinusoidalPositionalEncoding | LearnedPositionalEmbedding | None = None
        self.relative_keys: RelativePositionEmbedding | None = None
        self.relative_values: RelativePositionEmbedding | None = None
        self.relative_bias: T5RelativePositionBias | None = None
        self.rotary: RotaryEmbedding | None = None
        self._alibi_cache: tuple[tuple[object, ...], torch.Tensor] | None = None
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
        self,
        x: torch.Tensor,
        mask: torch.Tensor | None = None,
        *,
        causal: bool = False,
        positions: torch.Tensor | None = None,
        need_weights: bool = True,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Attend over the sequence ``x``.

        Args:
            x: ``(..., L, D)`` token representations.
            mask: optional boolean mask broadcastable to ``(..., h, L, L)``; True = may attend.
            causal: if True, also apply :func:`~posenc.attention.causal_mask` (query ``i`` sees
                the tokens ``j <= i`` by index, whatever their ``positions``).
            positions: optional positions of the tokens (default ``arange(L)``), as in
                :func:`~posenc.rotary.apply_rope`: ``(L,)`` shared by the batch, or per-sample
                ``(B, L)`` with ``x`` of shape ``(B, L, D)`` (packed sequences, left padding;
                every scheme but ``shaw``). The absolute schemes
                add the encoding of these positions; the relative ones (``shaw``, ``t5``,
                ``alibi``) use their offsets ``positions[j] - positions[i]`` and ``rope``
                rotates to them, so a block of tokens can be run at shifted positions (as in
                decoding with a cache, or training with random offsets). ``learned``,
                ``sinusoidal``, ``shaw`` and ``t5`` need integer positions.
            need_weights: if True, return the attention weights too. If False, the attention
                runs through the fused :func:`torch.nn.functional.scaled_dot_product_attention`
                (the position bias and the mask passed as its ``attn_mask``), which is faster
                and is what training uses; ``shaw`` needs its weights for the value embeddings
                and computes them either way.

        Returns:
            ``(output, weights)``: ``(..., L, D)`` and ``(..., h, L, L)``, or ``(output, None)``
            when ``need_weights`` is False.

        Raises:
            TypeError: if ``x`` is not floating, ``mask`` is not boolean, or a scheme that needs
                integer positions gets real ones.
            ValueError: if the last dimension of ``x`` is not ``embed_dim``, or ``positions`` is
                neither ``(L,)`` nor ``(B, L)`` matching ``x`` (or per-sample with ``shaw``, or has
                a position the ``learned`` table lacks).
        """
        x = check_floating("x", check_tensor("x", x, min_dim=2))
        if x.shape[-1] != self.embed_dim:
            raise ValueError(f"x must have last dimension embed_dim={self.embed_dim}, got shape {tuple(x.shape)}")
        seq_len = x.shape[-2]
        if positions is not None:
            positions = resolve_sample_positions(positions, x)
            if self.position == "shaw" and positions.dim() == 2:
                raise ValueError(
                    "position='shaw' takes one (L,) positions tensor shared by the batch: its relative "
                    f"vectors are one (L, L, d) table per layer, got positions of shape {tuple(positions.shape)}"
                )
            if self.position in ("shaw", "t5") and positions.is_floating_point():
                raise TypeError(
                    f"position={self.position!r} looks up a table by offset and needs integer positions, "
                    f"got dtype {positions.dtype}"
                )
        if mask is not None:
            mask = check_tensor("mask", mask)
            if mask.dtype != torch.bool:
                raise TypeError(f"mask must be a boolean tensor (True = may attend), got dtype {mask.dtype}")
        if self.input_encoding is not None:
            x = self.input_encoding(x, positions)
        q, k, v = (self._split_heads(t) for t in self.qkv(x).chunk(3, dim=-1))
        if self.rotary is not None:
            q, k = self.rotary(q, positions), self.rotary(k, positions)
        bias = None if self._fused_alibi(need_weights, positions, mask) else self._position_bias(seq_len, positions, x)
        if self.relative_keys is not None and self.relative_values is not None:
            key_embeddings, value_embeddings = self._shaw_embeddings(seq_len, positions)
            output, weights = shaw_attention(
                q, k, v, key_embeddings, value_embeddings, mask=self._full_mask(mask, causal, seq_len, x.device)
            )
            return self.out(self._merge_heads(output)), weights if need_weights else None
        if need_weights:
            output, weights = scaled_dot_product_attention(
                q, k, v, mask=self._full_mask(mask, causal, seq_len, x.device), bias=bias
            )
            return self.out(self._merge_heads(output)), weights
        if self._fused_alibi(need_weights, positions, mask):
            output = F.scaled_dot_product_attention(q, k, v, attn_mask=self._alibi_mask(seq_len, causal, q))
        elif bias is None and mask is None:
            output = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        else:
            attn_mask: torch.Tensor | None = self._full_mask(mask, causal, seq_len, x.device)
            if bias is not None:
                bias = bias.to(q.dtype)
                attn_mask = bias if attn_mask is None else bias.masked_fill(~attn_mask, float("-inf"))
            output = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask)
        return self.out(self._merge_heads(output)), None

    def _fused_alibi(self, need_weights: bool, positions: torch.Tensor | None, mask: torch.Tensor | None) -> bool:
        """Whether the fused path can use the cached ALiBi mask (default positions, no user mask)."""
        return self.position == "alibi" and not need_weights and positions is None and mask is None

    def _alibi_mask(self, seq_len: int, causal: bool, q: torch.Tensor) -> torch.Tensor:
        """ALiBi's bias with the causal mask folded in (``-inf``), as one float ``attn_mask``.

        It depends on nothing learned, so the last one is kept (training calls it with the same
        length every step): a plain fused-attention layer caches it the same way.
        """
        key = (seq_len, causal, q.device, q.dtype)
        if self._alibi_cache is None or self._alibi_cache[0] != key:
            bias = alibi_bias(self.num_heads, seq_len).to(q.device, q.dtype)
            if causal:
                bias = bias.masked_fill(~causal_mask(seq_len, device=q.device), float("-inf"))
            self._alibi_cache = (key, bias)
        return self._alibi_cache[1]

    @staticmethod
    def _full_mask(mask: torch.Tensor | None, causal: bool, seq_len: int, device: torch.device) -> torch.Tensor | None:
        if not causal:
            return mask
        causal_part = causal_mask(seq_len, device=device)
        return causal_part if mask is None else mask & causal_part

    @staticmethod
    def _offsets(seq_len: int, positions: torch.Tensor | None, device: torch.device) -> torch.Tensor:
        # (L, L), or (B, L, L) for per-sample positions: offsets j - i of key minus query
        # position, T5's sign convention.
        if positions is None:
            return relative_positions(seq_len).to(device)
        return positions[..., None, :] - positions[..., :, None]

    def _position_bias(self, seq_len: int, positions: torch.Tensor | None, x: torch.Tensor) -> torch.Tensor | None:
        """The ``(h, L, L)`` (per-sample: ``(B, h, L, L)``) bias of ``t5`` or ``alibi`` (None otherwise)."""
        if self.relative_bias is not None:
            if positions is None:
                return self.relative_bias(seq_len, seq_len)
            table = self.relative_bias
            buckets = t5_relative_position_bucket(
                self._offsets(seq_len, positions, x.device).long(),
                bidirectional=table.bidirectional,
                num_buckets=table.num_buckets,
                max_distance=table.max_distance,
            )
            return table.embedding(buckets).movedim(-1, -3)
        if self.position == "alibi":
            if positions is None:
                return alibi_bias(self.num_heads, seq_len).to(x.device, x.dtype)
            distance = self._offsets(seq_len, positions, x.device).abs().to(x.dtype).unsqueeze(-3)
            return -alibi_slopes(self.num_heads).to(x.device, x.dtype)[:, None, None] * distance
        return None

    def _shaw_embeddings(self, seq_len: int, positions: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
        """Shaw's key and value vectors ``(L, L, d)`` for the clipped offsets of ``positions``."""
        if self.relative_keys is None or self.relative_values is None:
            raise RuntimeError("only a position='shaw' layer has relative key and value embeddings")
        if positions is None:
            return self.relative_keys(seq_len, seq_len), self.relative_values(seq_len, seq_len)
        distance = self.relative_keys.max_distance
        index = self._offsets(seq_len, positions, positions.device).long().clamp(-distance, distance) + distance
        return self.relative_keys.embedding(index), self.relative_values.embedding(index)

    def _split_heads(self, t: torch.Tensor) -> torch.Tensor:
        # (..., L, D) -> (..., h, L, d)
        return t.unflatten(-1, (self.num_heads, self.head_dim)).transpose(-3, -2)

    def _merge_heads(self, t: torch.Tensor) -> torch.Tensor:
        # (..., h, L, d) -> (..., L, D)
        return t.transpose(-3, -2).flatten(-2)
