"""Print a table of RoPE timings on this machine (fp32, CPU).

Usage: python benchmarks/rope_speed.py [--shape 4 8 1024 64] [--min-run-time 1.0]
"""

from __future__ import annotations

import argparse

import torch

from posenc import describe_machine, format_timings, rope_timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", type=int, nargs=4, default=[4, 8, 1024, 64], metavar=("B", "H", "L", "D"))
    parser.add_argument("--min-run-time", type=float, default=1.0, help="seconds measured per implementation")
    args = parser.parse_args()
    torch.manual_seed(0)
    print(f"Machine: {describe_machine()}")
    print(f"Tensor: fp32, shape {tuple(args.shape)}\n")
    print(format_timings(rope_timings(tuple(args.shape), min_run_time=args.min_run_time)))


if __name__ == "__main__":
    main()
