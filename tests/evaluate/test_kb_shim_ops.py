"""The torch shim's arithmetic with a number, whole-tensor sum/mean and at::maybe_wrap_dim
(cuset/evaluate/cpu/include/ATen/core/Tensor.h, ATen/Functions.h, c10/core/WrapDimMinimal.h).

Each piece is used the way KernelBench solutions use it (a kernel's partial sums finished with
`partial.sum() / n`, `torch::mean(1.0 - y)`, a dim wrapped before indexing sizes), checked
correct on the shim path, and a planted-bug variant of each is caught. Tensor-tensor arithmetic
stays out of the shim: a build of it on the shim fails with the missing operator named.
Builds are cached under workspace/cache (as in test_kernelbench.py), so reruns skip g++.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cuset.evaluate.cpu.kernelbench import missing_aten

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module", autouse=True)
def _shared_build_cache():
    with pytest.MonkeyPatch.context() as mp:
        if not os.environ.get("CUSET_BUILD_CACHE"):
            mp.setenv("CUSET_BUILD_CACHE", str(REPO / "workspace" / "cache" / "cpu-build"))
        yield


def run(tmp_path: Path, solution: str, task: str, *extra: str) -> dict:
    """The KernelBench command of the CPU backend on these two texts, in a fresh process."""
    (tmp_path / "solution.py").write_text(solution, encoding="utf-8")
    (tmp_path / "task.py").write_text(task, encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "cuset.evaluate.cpu.kernelbench", str(tmp_path / "solution.py"), str(tmp_path / "task.py"),
                           "--trials", "2", "--timeout", "300", *extra], capture_output=True, text=True, timeout=600)
    lines = proc.stdout.strip().splitlines()
    assert lines and lines[-1].startswith("{"), proc.stderr[-2000:]
    return json.loads(lines[-1])


def solution(name: str, cuda: str, decl: str, call: str) -> str:
    return f'''
import torch.nn as nn
from torch.utils.cpp_extension import load_inline
cuda = r"""
#include <torch/extension.h>
{cuda}
"""
ext = load_inline(name="{name}", cpp_sources="{decl}", cuda_sources=cuda, functions=["run"])
class ModelNew(nn.Module):
    def __init__(self, *args):
        super().__init__()
        self.args = args
    def forward(self, x):
        return ext.run({call})
'''


def task(forward: str, init: str = "[]") -> str:
    return f'''
import torch
import torch.nn as nn
class Model(nn.Module):
    def __init__(self, *args):
        super().__init__()
        self.args = args
    def forward(self, x):
        return {forward}
def get_inputs():
    return [torch.randn(8, 300)]
def get_init_inputs():
    return {init}
'''


# ---------------------------------------------------------------- partial.sum() / n

ABS_PARTIALS = """
__global__ void abs_partials(const float* x, float* partial, int64_t n) {
    __shared__ float s[128];
    float acc = 0.f;
    for (int64_t i = blockIdx.x * 128 + threadIdx.x; i < n; i += 128 * gridDim.x) acc += fabsf(x[i]);
    s[threadIdx.x] = acc;
    __syncthreads();
    for (int k = 64; k > 0; k >>= 1) {
        if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) partial[blockIdx.x] = s[0];
}
torch::Tensor run(torch::Tensor x) {
    auto partial = torch::empty({7}, x.options());
    abs_partials<<<7, 128>>>(x.data_ptr<float>(), partial.data_ptr<float>(), x.numel());
    return partial.sum() / DIVISOR;
}
"""
MEAN_ABS_TASK = task("torch.mean(torch.abs(x))")


def test_partial_sums_over_n_are_correct_on_the_shim(tmp_path):
    r = run(tmp_path, solution("kb_test_sum_over_n", ABS_PARTIALS.replace("DIVISOR", "x.numel()"), "torch::Tensor run(torch::Tensor x);", "x"),
            MEAN_ABS_TASK)
    assert (r["status"], r["path"]) == ("correct", "shim"), r["message"]
    assert r["max_abs_error"] < 1e-5


def test_partial_sums_over_the_wrong_count_are_caught(tmp_path):
    # divides by the rows (8), not the elements (2400): 300 times too large
    r = run(tmp_path, solution("kb_test_sum_over_rows", ABS_PARTIALS.replace("DIVISOR", "x.size(0)"), "torch::Tensor run(torch::Tensor x);", "x"),
            MEAN_ABS_TASK)
    assert (r["status"], r["path"]) == ("wrong_result", "shim")
    assert r["max_abs_error"] > 100


# ---------------------------------------------------------------- number - tensor, mean, integer sums

SQUARE_AND_COUNT = """
__global__ void square_and_flag(const float* x, float* y, int* positive, int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = x[i] * x[i];
        positive[i] = x[i] > 0.f;
    }
}
std::tuple<torch::Tensor, torch::Tensor> run(torch::Tensor x) {
    auto y = torch::empty_like(x);
    auto positive = torch::empty(x.sizes(), x.options().dtype(torch::kInt32));
    const int64_t n = x.numel();
    square_and_flag<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), positive.data_ptr<int>(), n);
    return {RESULT, positive.sum()};
}
"""
SQUARE_AND_COUNT_TASK = task("torch.mean(1 - x ** 2), (x > 0).sum()")
DECL = "std::tuple<torch::Tensor, torch::Tensor> run(torch::Tensor x);"


def test_number_minus_tensor_mean_and_integer_sum_are_correct(tmp_path):
    r = run(tmp_path, solution("kb_test_one_minus", SQUARE_AND_COUNT.replace("RESULT", "torch::mean(1.0 - y)"), DECL, "x"), SQUARE_AND_COUNT_TASK)
    assert (r["status"], r["path"]) == ("correct", "shim"), r["message"]


def test_tensor_minus_number_where_number_minus_tensor_is_meant_is_caught(tmp_path):
    r = run(tmp_path, solution("kb_test_minus_one", SQUARE_AND_COUNT.replace("RESULT", "torch::mean(y - 1.0)"), DECL, "x"), SQUARE_AND_COUNT_TASK)
    assert (r["status"], r["path"]) == ("wrong_result", "shim")


def test_integer_tensor_by_number_follows_torch_result_dtypes(tmp_path):
    # int32 / 2 is true division (float32); int32 * 3 stays int32; the sum of int32 is int64
    cuda = """
__global__ void iota(int* v, int n) { int i = threadIdx.x; if (i < n) v[i] = i; }
std::vector<torch::Tensor> run(torch::Tensor x) {
    auto v = torch::empty({x.size(1)}, x.options().dtype(torch::kInt32));
    iota<<<1, 512>>>(v.data_ptr<int>(), (int)v.numel());
    return {v / 2, v * 3, v.sum(), 10 - v};
}
"""
    ref = "[torch.arange(x.shape[1], dtype=torch.int32) / 2, torch.arange(x.shape[1], dtype=torch.int32) * 3, " \
          "torch.arange(x.shape[1], dtype=torch.int32).sum(), 10 - torch.arange(x.shape[1], dtype=torch.int32)]"
    r = run(tmp_path, solution("kb_test_int_dtypes", cuda, "std::vector<torch::Tensor> run(torch::Tensor x);", "x"), task(ref))
    assert (r["status"], r["path"]) == ("correct", "shim"), r["message"]


# ---------------------------------------------------------------- at::maybe_wrap_dim

SUM_OVER_DIM = """
__global__ void sum_rows(const float* x, float* y, int64_t outer, int64_t reduce, int64_t inner) {
    int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (t >= outer * inner) return;
    float acc = 0.f;
    for (int64_t r = 0; r < reduce; ++r) acc += x[(t / inner) * reduce * inner + r * inner + t % inner];
    y[t] = acc;
}
torch::Tensor run(torch::Tensor x, int64_t dim) {
    dim = at::maybe_wrap_dim(dim, NDIM);
    const int64_t reduce = x.size(dim);
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < dim; ++d) outer *= x.size(d);
    for (int64_t d = dim + 1; d < x.dim(); ++d) inner *= x.size(d);
    auto sizes = x.sizes().vec();
    sizes.erase(sizes.begin() + dim);
    auto y = torch::empty(sizes, x.options());
    sum_rows<<<(outer * inner + 127) / 128, 128>>>(x.data_ptr<float>(), y.data_ptr<float>(), outer, reduce, inner);
    return y;
}
"""
SUM_TASK = task("torch.sum(x, dim=self.args[0])", init="[-1]")
SUM_DECL = "torch::Tensor run(torch::Tensor x, int64_t dim);"


def test_negative_dim_wrapped_by_maybe_wrap_dim_is_correct(tmp_path):
    r = run(tmp_path, solution("kb_test_wrap_dim", SUM_OVER_DIM.replace("NDIM", "x.dim()"), SUM_DECL, "x, self.args[0]"), SUM_TASK)
    assert (r["status"], r["path"]) == ("correct", "shim"), r["message"]


def test_dim_wrapped_against_the_wrong_rank_raises_torchs_index_error(tmp_path):
    # -1 wrapped against rank 3 is dim 2, which a 2-D input lacks: x.size(2) raises, as in torch
    r = run(tmp_path, solution("kb_test_wrap_dim_bad", SUM_OVER_DIM.replace("NDIM", "x.dim() + 1"), SUM_DECL, "x, self.args[0]"), SUM_TASK)
    assert (r["status"], r["path"]) == ("runtime_error", "shim")
    assert "IndexError" in r["message"] and "Dimension out of range (expected to be in range of [-2, 1], but got 2)" in r["message"]


# ---------------------------------------------------------------- what stays out

def test_tensor_tensor_arithmetic_is_not_in_the_shim_and_is_named(tmp_path):
    cuda = "torch::Tensor run(torch::Tensor x) { auto y = torch::empty_like(x); return x + y; }"
    r = run(tmp_path, solution("kb_test_tensor_plus", cuda, "torch::Tensor run(torch::Tensor x);", "x"), task("x + x"), "--path", "shim")
    assert r["status"] == "compile_error"
    assert missing_aten(r["message"]) == "operator+ (at::Tensor, at::Tensor)"


def test_missing_aten_names_each_piece_once_in_order():
    message = "\n".join([
        "s.py:3:9: error: 'matmul' is not a member of 'torch'",
        "s.py:4:9: error: 'class at::Tensor' has no member named 'softmax'",
        "s.py:5:9: error: 'matmul' is not a member of 'torch'",
        "s.py:6:9: error: no match for 'operator*' (operand types are 'at::Tensor' and 'at::Tensor')",
        "s.py:7:9: error: no matching function for call to 'at::Tensor::sum(int, bool)'",
        "s.py:1:10: fatal error: ATen/native/ReduceOps.h: No such file or directory",
        "s.py:8:9: note: candidate: 'at::Tensor at::Tensor::sum()'",
        "s.py:9:5: error: expected ';' before 'return'",
    ])
    assert missing_aten(message) == ("torch::matmul; at::Tensor::softmax; operator* (at::Tensor, at::Tensor); at::Tensor::sum(int, bool); "
                                     "header <ATen/native/ReduceOps.h>")
    assert missing_aten("s.py:14:25: error: 'c' was not declared in this scope") == ""
