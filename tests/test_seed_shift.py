"""The seed-shifted runs stand in for another CPU: each emulated CPU must change PyTorch's rounding."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import torch
from bookkit.seed_shift import EMULATED_CPUS, apply_settings, emulated_cpu

# Products and softmaxes shaped like the chapters' attention, printed bit for bit.
PROBE = """
import torch
torch.manual_seed(0)
x, w = torch.randn(64, 257), torch.randn(257, 129)
scores = x @ w / 257 ** 0.5
print(torch.backends.cpu.get_cpu_capability(), scores.numpy().tobytes().hex(),
      torch.softmax(scores, -1).numpy().tobytes().hex())
"""


def _probe(settings: dict[str, str | None]) -> tuple[str, str, str]:
    env = dict(os.environ)
    apply_settings(settings, env)
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, check=True, capture_output=True, text=True)
    capability, products, softmax = out.stdout.split()
    return capability, products, softmax


def test_offsets_one_and_two_use_both_emulated_cpus():
    assert {emulated_cpu(1), emulated_cpu(2)} == set(EMULATED_CPUS)
    assert emulated_cpu(3) == emulated_cpu(1) and emulated_cpu(4) == emulated_cpu(2)


@pytest.mark.parametrize("name", list(EMULATED_CPUS))
def test_each_emulated_cpu_rounds_differently_from_this_one(name):
    native = _probe({})
    emulated = _probe(EMULATED_CPUS[name])
    wanted = EMULATED_CPUS[name]["ATEN_CPU_CAPABILITY"]
    assert wanted is not None
    if native[0].lower() == wanted:
        pytest.skip(f"this CPU's own kernels are already {native[0]}")
    assert emulated[0].lower() == wanted, f"ATEN_CPU_CAPABILITY={wanted} was not applied: {emulated[0]}"
    # The softmax (ATen's vectorised kernel) rounds differently in the last bits ...
    assert emulated[2] != native[2]
    # ... and the results still agree to float32 precision: a stand-in, not a bug.
    a = torch.frombuffer(bytearray.fromhex(native[2]), dtype=torch.float32)
    b = torch.frombuffer(bytearray.fromhex(emulated[2]), dtype=torch.float32)
    torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-7)


def test_the_mkl_avx2_path_changes_matrix_products():
    if not torch.backends.mkl.is_available():
        pytest.skip("PyTorch was built without MKL")
    native = _probe({})
    if native[0].lower() == "avx2":
        pytest.skip("this CPU has no AVX-512: MKL's AVX2 path is its own")
    emulated = _probe(EMULATED_CPUS[emulated_cpu(1)])
    assert emulated[1] != native[1], "MKL_CBWR=AVX2 left matrix products bit-identical"
