"""Training-path speed of MultiHeadSelfAttention against a plain fused-attention layer.

Times forward + backward (fp32, CPU, one thread) of ``MultiHeadSelfAttention(...,
need_weights=False)`` and of :class:`PlainAttention`, a layer written from torch primitives
around :func:`torch.nn.functional.scaled_dot_product_attention` with its position tables
precomputed, and prints the ratio for ``position="rope"`` and ``"alibi"`` (causal); the last
column is the ratio of the weights-returning path (``need_weights=True``), for comparison.

Usage: python benchmarks/attention_speed.py [--shape 16 256 128 4] [--min-run-time 2.0]
"""

from __future__ import annotations

import argparse
import math

import torch
import torch.nn.functional as F
from torch import nn

from posenc import MultiHeadSelfAttention, alibi_slopes, describe_machine, median_time, rope_frequencies


class PlainAttention(nn.Module):
    """The reference: causal self-attention with RoPE (half layout) or ALiBi, nothing else.

    Its cos/sin tables and its ALiBi mask (bias and causal -inf in one tensor) are built once for
    ``seq_len``, as a production layer would cache them.
    """

    def __init__(self, embed_dim: int, num_heads: int, position: str, seq_len: int) -> None:
        super().__init__()
        self.num_heads, self.head_dim, self.position = num_heads, embed_dim // num_heads, position
        self.qkv = nn.Linear(embed_dim, 3 * embed_dim)
        self.out = nn.Linear(embed_dim, embed_dim)
        angles = torch.outer(torch.arange(seq_len, dtype=torch.float64), rope_frequencies(self.head_dim))
        angles = torch.cat((angles, angles), dim=-1)
        self.register_buffer("cos", angles.cos().float(), persistent=False)
        self.register_buffer("sin", angles.sin().float(), persistent=False)
        distance = (torch.arange(seq_len)[None, :] - torch.arange(seq_len)[:, None]).float()
        bias = alibi_slopes(num_heads)[:, None, None] * distance  # m (j - i) <= 0 for j <= i
        self.register_buffer("alibi", bias.masked_fill(distance > 0, -math.inf), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, seq_len, embed_dim = x.shape
        q, k, v = self.qkv(x).view(batch, seq_len, 3, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        if self.position == "rope":
            half = self.head_dim // 2
            q, k = (t * self.cos + torch.cat((-t[..., half:], t[..., :half]), -1) * self.sin for t in (q, k))
            attended = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            attended = F.scaled_dot_product_attention(q, k, v, attn_mask=self.alibi)
        return self.out(attended.transpose(1, 2).reshape(batch, seq_len, embed_dim))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", type=int, nargs=4, default=[16, 256, 128, 4], metavar=("B", "L", "D", "h"))
    parser.add_argument("--min-run-time", type=float, default=2.0, help="seconds measured per layer")
    args = parser.parse_args()
    batch, seq_len, embed_dim, num_heads = args.shape
    torch.set_num_threads(1)
    torch.manual_seed(0)
    print(f"Machine: {describe_machine()}")
    print(f"Forward + backward, fp32, causal, (B, L, D, h) = {tuple(args.shape)}\n")
    print(f"{'position':<10}{'posenc (ms)':>13}{'plain (ms)':>12}{'ratio':>8}{'with weights':>15}")
    x = torch.randn(batch, seq_len, embed_dim, requires_grad=True)
    for position in ("rope", "alibi"):
        ours = MultiHeadSelfAttention(embed_dim, num_heads, position=position)
        plain = PlainAttention(embed_dim, num_heads, position, seq_len)

        def step_ours(layer: nn.Module = ours) -> None:
            layer(x, causal=True, need_weights=False)[0].sum().backward()

        def step_plain(layer: nn.Module = plain) -> None:
            layer(x).sum().backward()

        # Alternate the two, twice, and keep each one's best median: load from other processes
        # on the machine then hurts both alike.
        steps = (step_ours, step_plain, step_ours, step_plain)
        times = [median_time(step, min_run_time=args.min_run_time) for step in steps]
        ours_ms, plain_ms = 1e3 * min(times[0], times[2]), 1e3 * min(times[1], times[3])

        def step_weights(layer: nn.Module = ours) -> None:
            layer(x, causal=True, need_weights=True)[0].sum().backward()

        # For comparison: the path that also returns the weights (explicit softmax).
        weights_ms = 1e3 * median_time(step_weights, min_run_time=args.min_run_time)
        print(
            f"{position:<10}{ours_ms:>13.2f}{plain_ms:>12.2f}{ours_ms / plain_ms:>7.2f}x{weights_ms / plain_ms:>14.2f}x"
        )


if __name__ == "__main__":
    main()
