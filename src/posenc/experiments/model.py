"""The tiny causal transformer of Part V: token embeddings, pre-norm blocks of attention and MLP, logits.

Shape legend:
    - ``B``: batch size (number of sequences)
    - ``L``: sequence length, the BOS token included
    - ``V``: number of content tokens; the model's vocabulary has ``V + 1`` entries (``BOS = V``)
    - ``D``: model dimension; ``h``: number of heads
"""

from __future__ import annotations

import torch
from torch import nn

from .._validation import check_choice, check_int, check_tensor
from ..absolute import LearnedPositionalEmbedding, SinusoidalPositionalEncoding
from ..multihead import POSITION_SCHEMES, MultiHeadSelfAttention
from .config import TrainConfig

__all__ = ["BEYOND_TABLE", "TinyCausalLM", "build_model"]


BEYOND_TABLE = ("error", "clip")
"""What a ``learned`` :class:`TinyCausalLM` does with a position past its table: refuse or clip."""


class TinyCausalLM(nn.Module):
    """A tiny causal transformer: embeddings, pre-norm blocks of attention and MLP, logits.

    ``position`` selects how the model sees order. ``learned`` and ``sinusoidal`` add their
    encoding to the token embeddings once, at the input; the relative schemes (``shaw``,
    ``t5``, ``alibi``, ``rope``) act in every layer's :class:`~posenc.multihead.MultiHeadSelfAttention`;
    ``none`` has only the causal mask (NoPE). ``t5`` buckets are unidirectional (a causal
    model never sees the future), Shaw's clipping distance is ``max_len``.

    Args:
        vocab_size: number of content tokens ``V``; the vocabulary adds one BOS token.
        position: one of :data:`~posenc.multihead.POSITION_SCHEMES`.
        dim: model dimension ``D``.
        num_heads: heads per layer ``h``.
        num_layers: number of blocks.
        max_len: rows of the ``learned`` table; also the ``t5`` saturation distance and the
            ``shaw`` clipping distance unless ``shaw_clip`` is given.
        shaw_clip: optional ``shaw`` clipping distance.

    Shapes:
        ``forward(tokens)``: ``(B, L)`` integer tokens -> ``(B, L, V + 1)`` logits.

    Raises:
        ValueError: if a size is invalid or ``position`` is unknown.
    """

    def __init__(
        self,
        vocab_size: int,
        *,
        position: str,
        dim: int = 32,
        num_heads: int = 4,
        num_layers: int = 2,
        max_len: int = 32,
        shaw_clip: int | None = None,
    ) -> None:
        super().__init__()
        self.vocab_size = check_int("vocab_size", vocab_size, minimum=2)
        self.position = check_choice("position", position, POSITION_SCHEMES)
        self.max_len = check_int("max_len", max_len, minimum=2)
        self.embedding = nn.Embedding(vocab_size + 1, dim)
        self.input_encoding: SinusoidalPositionalEncoding | LearnedPositionalEmbedding | None = None
        if position == "sinusoidal":
            self.input_encoding = SinusoidalPositionalEncoding(dim)
        elif position == "learned":
            self.input_encoding = LearnedPositionalEmbedding(max_len, dim)
        layer_position = "none" if position in ("sinusoidal", "learned") else position
        options: dict[str, object] = {}
        if position == "shaw":
            options["max_distance"] = max_len if shaw_clip is None else check_int("shaw_clip", shaw_clip, minimum=1)
        elif position == "t5":
            options.update(bidirectional=False, num_buckets=16, max_distance=max(max_len, 9))
        self.blocks = nn.ModuleList(
            _Block(dim, num_heads, layer_position, options)
            for _ in range(check_int("num_layers", num_layers, minimum=1))
        )
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab_size + 1)

    def forward(
        self, tokens: torch.Tensor, positions: torch.Tensor | None = None, *, beyond_table: str = "error"
    ) -> torch.Tensor:
        """Logits for every position.

        Args:
            tokens: ``(B, L)`` integer tokens in ``[0, V]``.
            positions: optional 1-D tensor of ``L`` integer positions (default ``arange(L)``).
            beyond_table: what a ``learned`` model does with positions ``>= max_len``:
                ``"error"`` refuses (ValueError), ``"clip"`` gives them the last row of the table.

        Returns:
            ``(B, L, V + 1)`` logits.

        Raises:
            TypeError: if ``tokens`` is not an integer tensor.
            ValueError: if ``tokens`` is not 2-D or out of range, or a ``learned`` model meets a
                position beyond its table with ``beyond_table="error"``.
        """
        hidden, positions = self._embed(tokens, positions, beyond_table)
        for block in self.blocks:
            hidden = block(hidden, positions)
        return self.head(self.norm(hidden))

    def attention_weights(
        self, tokens: torch.Tensor, positions: torch.Tensor | None = None, *, beyond_table: str = "error"
    ) -> list[torch.Tensor]:
        """The attention weights of every layer, ``num_layers`` tensors of shape ``(B, h, L, L)``.

        Same arguments as :meth:`forward`.
        """
        hidden, positions = self._embed(tokens, positions, beyond_table)
        weights = []
        for block in self.blocks:
            hidden, layer_weights = block(hidden, positions, need_weights=True)
            weights.append(layer_weights)
        return weights

    def _embed(
        self, tokens: torch.Tensor, positions: torch.Tensor | None, beyond_table: str
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        tokens = check_tensor("tokens", tokens)
        if tokens.is_floating_point() or tokens.dtype == torch.bool:
            raise TypeError(f"tokens must be an integer tensor, got dtype {tokens.dtype}")
        if tokens.dim() != 2:
            raise ValueError(f"tokens must have shape (B, L), got {tuple(tokens.shape)}")
        if tokens.numel() and (int(tokens.min()) < 0 or int(tokens.max()) > self.vocab_size):
            raise ValueError(f"tokens must lie in [0, {self.vocab_size}] (BOS = {self.vocab_size})")
        check_choice("beyond_table", beyond_table, BEYOND_TABLE)
        hidden = self.embedding(tokens)
        if self.input_encoding is not None:
            table_positions = torch.arange(tokens.shape[1], device=tokens.device) if positions is None else positions
            if isinstance(self.input_encoding, LearnedPositionalEmbedding) and beyond_table == "clip":
                table_positions = table_positions.clamp(max=self.max_len - 1)
            hidden = self.input_encoding(hidden, table_positions)
        return hidden, positions


class _Block(nn.Module):
    """Pre-norm block: ``x + attn(norm(x))`` then ``x + mlp(norm(x))``."""

    def __init__(self, dim: int, num_heads: int, position: str, options: dict[str, object]) -> None:
        super().__init__()
        self.attention_norm = nn.LayerNorm(dim)
        self.attention = MultiHeadSelfAttention(dim, num_heads, position=position, **options)  # type: ignore[arg-type]
        self.mlp_norm = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x: torch.Tensor, positions: torch.Tensor | None, need_weights: bool = False):  # type: ignore[no-untyped-def]
        attended, weights = self.attention(
            self.attention_norm(x), causal=True, positions=positions, need_weights=need_weights
        )
        x = x + attended
        x = x + self.mlp(self.mlp_norm(x))
        return (x, weights) if need_weights else x


def build_model(config: TrainConfig) -> TinyCausalLM:
    """The untrained :class:`TinyCausalLM` of ``config`` (initialised from torch's global generator)."""
    return TinyCausalLM(
        config.vocab_size,
        position=config.position,
        dim=config.dim,
        num_heads=config.num_heads,
        num_layers=config.num_layers,
        max_len=config.table_len,
        shaw_clip=config.shaw_clip,
    )
