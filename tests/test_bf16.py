"""cuset.bf16: bf16 products as float32 GEMMs give torch's own bf16 results (up to the order of
the float32 sums), in bf16, forward and backward, and only where they are asked for."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from cuset import bf16

BF = torch.bfloat16


def _ulps(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """How many bf16 steps apart two bf16 tensors are, elementwise (same-sign values)."""
    return (a.view(torch.int16).int() - b.view(torch.int16).int()).abs()


def _close_to_native(ours: torch.Tensor, native: torch.Tensor) -> None:
    assert ours.dtype == native.dtype == BF
    assert ours.shape == native.shape
    same = (ours == native).float().mean().item()
    assert same > 0.97, f"only {same:.1%} of elements bit-identical to torch's bf16 op"
    # The rest differ by the rounding of one differently ordered float32 sum: a step or two.
    assert torch.allclose(ours.float(), native.float(), rtol=2e-2, atol=1e-2)


@pytest.fixture
def gen() -> torch.Generator:
    return torch.Generator().manual_seed(0)


def test_matrix_products_match_torch_bf16_kernels(gen: torch.Generator) -> None:
    a = torch.randn(24, 40, generator=gen).to(BF)
    b = torch.randn(40, 16, generator=gen).to(BF)
    bias = torch.randn(16, generator=gen).to(BF)
    x3 = torch.randn(3, 24, 40, generator=gen).to(BF)
    y3 = torch.randn(3, 40, 8, generator=gen).to(BF)
    c3 = torch.randn(3, 24, 8, generator=gen).to(BF)
    w = torch.randn(16, 40, generator=gen).to(BF)
    cases = {
        "mm": lambda: torch.mm(a, b),
        "addmm": lambda: torch.addmm(bias, a, b, beta=0.5, alpha=2.0),
        "bmm": lambda: torch.bmm(x3, y3),
        "baddbmm": lambda: torch.baddbmm(c3, x3, y3),
        "linear": lambda: F.linear(x3, w, bias),
        "matmul": lambda: x3 @ y3,
        "mv": lambda: torch.mv(a, b[:, 0].contiguous()),
        "addmv": lambda: torch.addmv(bias, w, a[0].contiguous()),
    }
    for name, op in cases.items():
        native = op()
        with bf16.Float32Matmuls() as mode:
            ours = op()
        assert mode.calls >= 1, name
        _close_to_native(ours, native)


def test_the_float32_gemm_is_the_exact_product_of_the_bf16_values(gen: torch.Generator) -> None:
    """The float32 result rounded once to bf16 is what a bf16 kernel with float32 accumulation
    computes; check it against a float64 reference of the same bf16 values."""
    a = torch.randn(8, 300, generator=gen).to(BF)
    b = torch.randn(300, 5, generator=gen).to(BF)
    with bf16.Float32Matmuls() as mode:
        ours = a @ b
    assert mode.calls == 1
    exact = (a.double() @ b.double()).to(BF)
    assert _ulps(ours, exact).max().item() <= 1


def test_other_dtypes_and_other_ops_pass_through(gen: torch.Generator) -> None:
    a = torch.randn(6, 7, generator=gen)
    b = torch.randn(7, 3, generator=gen)
    with bf16.Float32Matmuls() as mode:
        out = a @ b
        summed = (a.to(BF) + 1).sum()
    assert mode.calls == 0
    assert out.dtype == torch.float32 and torch.equal(out, a @ b)
    assert summed.dtype == BF


def test_autocast_training_step_goes_through_the_mode_both_ways(gen: torch.Generator) -> None:
    """A bf16-autocast forward and its backward: every product (the backward's too) is rerouted,
    the loss and the gradients agree with torch's own bf16 kernels."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.GELU(), torch.nn.Linear(64, 10))
    x = torch.randn(16, 32, generator=gen)
    target = torch.randint(0, 10, (16,), generator=gen)

    def step() -> tuple[float, list[torch.Tensor]]:
        model.zero_grad()
        with torch.autocast("cpu", dtype=BF):
            loss = F.cross_entropy(model(x).float(), target)
        loss.backward()
        return loss.item(), [p.grad.clone() for p in model.parameters()]

    native_loss, native_grads = step()
    with bf16.Float32Matmuls() as mode:
        loss, grads = step()
    # forward: 2 addmm; backward: grad input of the second layer and grad weight of both
    assert mode.calls >= 5
    assert loss == pytest.approx(native_loss, rel=1e-2)
    for ours, native in zip(grads, native_grads, strict=True):
        assert ours.dtype == torch.float32  # master weights keep their dtype
        assert torch.allclose(ours, native, rtol=5e-2, atol=5e-3)


def test_flash_attention_forward_and_backward_round_once(gen: torch.Generator) -> None:
    """Attention through the mode is the exact result rounded once to bf16 (torch's own CPU flash
    kernel also rounds the softmax probabilities to bf16, so it sits a little further off)."""
    q, k, v = (torch.randn(1, 2, 32, 16, generator=gen).to(BF).requires_grad_() for _ in range(3))
    probe = torch.randn(1, 2, 32, 16, generator=gen).to(BF)

    def run() -> tuple[torch.Tensor, ...]:
        for t in (q, k, v):
            t.grad = None
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        out.backward(probe)
        return out.detach(), q.grad, k.grad, v.grad

    native = run()
    with bf16.Float32Matmuls() as mode:
        ours = run()
    assert mode.calls == 2  # the fused forward and its backward (whose logsumexp is float32)
    exact = F.scaled_dot_product_attention(q.detach().double(), k.detach().double(), v.detach().double(), is_causal=True)
    assert (ours[0] == exact.to(BF)).float().mean().item() > 0.99
    for a, b in zip(ours, native, strict=True):
        assert a.dtype == b.dtype == BF
        assert torch.allclose(a.float(), b.float(), rtol=3e-2, atol=3e-2)


def test_mixed_dtypes_are_left_to_torch(gen: torch.Generator) -> None:
    a = torch.randn(4, 5, generator=gen).to(BF)
    b = torch.randn(5, 3, generator=gen)
    with bf16.Float32Matmuls() as mode, pytest.raises(RuntimeError):
        torch.mm(a, b)  # torch refuses bf16 @ float32; the mode does not hide that
    assert mode.calls == 0


def test_fixed_weights_are_converted_once_under_inference_mode(gen: torch.Generator) -> None:
    layer = torch.nn.Linear(20, 30).to(BF)
    x = torch.randn(4, 20, generator=gen).to(BF)
    native = layer(x)
    with torch.inference_mode(), bf16.Float32Matmuls(list(layer.parameters())) as mode:
        first = layer(x)
        second = layer(x)
        assert mode.cached == 2  # weight and bias, once each
        layer.weight.mul_(2)  # changed in place: its copy is made again
        doubled = layer(x)
    assert mode.calls == 3
    assert torch.equal(first, second)
    _close_to_native(first, native.detach())
    assert torch.allclose(doubled.float(), F.linear(x, layer.weight, layer.bias).float(), rtol=2e-2, atol=2e-2)
    assert not torch.allclose(doubled.float(), first.float(), rtol=2e-2, atol=2e-2)


def test_enabled_only_for_bf16_on_a_cpu_without_bf16_products(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CUSET_BF16_MATMULS", raising=False)
    monkeypatch.setattr(bf16, "cpu_bf16_fast", lambda: False)
    assert bf16.enabled("bfloat16", "cpu")
    assert bf16.enabled("torch.bfloat16", "cpu")
    assert not bf16.enabled("float32", "cpu")
    assert not bf16.enabled("bfloat16", "cuda:0")
    with bf16.cpu_matmuls("bfloat16") as mode:
        assert isinstance(mode, bf16.Float32Matmuls)
    with bf16.cpu_matmuls("float32") as mode:
        assert mode is None
    monkeypatch.setenv("CUSET_BF16_MATMULS", "native")
    assert not bf16.enabled("bfloat16", "cpu")
    monkeypatch.delenv("CUSET_BF16_MATMULS")
    monkeypatch.setattr(bf16, "cpu_bf16_fast", lambda: True)
    assert not bf16.enabled("bfloat16", "cpu")
