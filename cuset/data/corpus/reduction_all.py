"""Full-reduction templates (reduction family): every element of a tensor to one 0-dim value.

Each block reduces a grid-stride slice (capped grid, so threads loop), then:

- sum-like ops (sum, mean, sum of squares) add each block's partial with one `atomicAdd` into
  a zero-initialised output;
- max / min, which have no float atomic, write per-block partials that a second one-block
  kernel reduces (the two-pass scheme).

The in-block step is a `__shfl_down_sync` reduction or a shared-memory tree (`reduction`).
"""

from __future__ import annotations

from cuset.data.corpus import host
from cuset.data.corpus.kernelbench import Spec, fill, task_module, unary_model_new
from cuset.data.corpus.reduction import BLOCK_REDUCE, FAMILY, OPS, SMEM_BLOCK_REDUCE, device_helpers


def full_spec(op_name: str, block: str, shape: tuple[int, ...], threads: int, cap: int, variant: int) -> Spec:
    """Reduction of every element to a 0-dim tensor; block is the in-block method (warp-shuffle | shared-memory)."""
    op = OPS[op_name]
    fn = f"{op.name}_all_cuda"
    names = ["batch_size", "dim1", "dim2"][: len(shape)]
    task = task_module(
        doc=f"Computes the {op.doc} of all elements of the input (a 0-dim result).",
        forward=f"def forward(self, x: torch.Tensor) -> torch.Tensor:\n    return {op.torch_call.format(args='')}",
        constants="\n".join(f"{n} = {s}" for n, s in zip(names, shape, strict=True)),
        inputs=f"x = torch.randn({', '.join(names)})\nreturn [x]",
    )
    warp = block == "warp-shuffle"
    if warp:
        helper = fill(BLOCK_REDUCE, identity=op.identity)
        reduce_call = "block_reduce(acc)"
    else:
        helper = SMEM_BLOCK_REDUCE.strip()
        reduce_call = f"block_reduce<{threads}>(acc, sdata)"
    smem_decl = "" if warp else f"\n    __shared__ float sdata[{threads}];"
    acc_loop = "acc = reduce_op(acc, {map});".format(map=op.map.replace("v", "x[i]"))
    accumulate = fill(
        """
            float acc = $identity;
            const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
            for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
                $acc_loop
            }
        """,
        identity=op.identity, acc_loop=acc_loop,
    )
    if op.sum_like:
        scale = " * inv_n" if op.name == "mean" else ""
        kernel = fill(
            """
            __global__ void __launch_bounds__($threads) reduce_all_kernel(const float* __restrict__ x, float* __restrict__ out, int64_t n, float inv_n) {$smem_decl
                $accumulate
                const float partial = $reduce_call;
                if (threadIdx.x == 0) {
                    atomicAdd(out, partial$scale);
                }
            }
            """,
            threads=threads, smem_decl=smem_decl, accumulate=accumulate, reduce_call=reduce_call, scale=scale,
        )
        body = fill(
            """
                // atomicAdd accumulates into out, so it must start at zero.
                auto out = torch::zeros({}, x.options());
                const int64_t n = x.numel();
                if (n == 0) {
                    return out;
                }
                constexpr int threads = $threads;
            $grid
                reduce_all_kernel<<<blocks, threads>>>(x.data_ptr<float>(), out.data_ptr<float>(), n, 1.0f / static_cast<float>(n));
            $check
                return out;
            """,
            threads=threads, grid=host.grid_stride_blocks("threads", "n", cap),
            check=host.launch_check(variant, "reduce_all_kernel"),
        )
        if op.finalize == "sqrtf(acc)":
            raise ValueError("full_spec: sqrt finalisation needs a second pass; use sumsq instead of l2")
        styles = ("grid-stride", "atomics", block)
        hint = f"Grid-stride accumulation, a {'shuffle' if warp else 'shared-memory'} block reduction, and one atomicAdd per block."
    else:
        kernel = fill(
            """
            // Pass 1: each block reduces a grid-stride slice to one partial.
            __global__ void __launch_bounds__($threads) reduce_partials_kernel(const float* __restrict__ x, float* __restrict__ partials, int64_t n) {$smem_decl
                $accumulate
                const float partial = $reduce_call;
                if (threadIdx.x == 0) {
                    partials[blockIdx.x] = partial;
                }
            }

            // Pass 2: a single block reduces the per-block partials (there is no float atomicMax).
            __global__ void __launch_bounds__($threads) reduce_final_kernel(const float* __restrict__ partials, float* __restrict__ out, int64_t n) {$smem_decl
                float acc = $identity;
                for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
                    acc = reduce_op(acc, partials[i]);
                }
                const float total = $reduce_call;
                if (threadIdx.x == 0) {
                    *out = total;
                }
            }
            """,
            threads=threads, smem_decl=smem_decl, accumulate=accumulate, reduce_call=reduce_call, identity=op.identity,
        )
        body = fill(
            """
                const int64_t n = x.numel();
                TORCH_CHECK(n > 0, "cannot reduce an empty tensor");
                auto out = torch::empty({}, x.options());
                constexpr int threads = $threads;
            $grid
                auto partials = torch::empty({blocks}, x.options());
                reduce_partials_kernel<<<blocks, threads>>>(x.data_ptr<float>(), partials.data_ptr<float>(), n);
            $check1
                reduce_final_kernel<<<1, threads>>>(partials.data_ptr<float>(), out.data_ptr<float>(), blocks);
                C10_CUDA_KERNEL_LAUNCH_CHECK();
                return out;
            """,
            threads=threads, grid=host.grid_stride_blocks("threads", "n", cap),
            check1="    C10_CUDA_KERNEL_LAUNCH_CHECK();",
        )
        styles = ("grid-stride", block)
        hint = f"Two passes: per-block partials from a grid-stride loop with a {'shuffle' if warp else 'shared-memory'} block reduction, then one block over the partials."
    host_fn = f"torch::Tensor {fn}(torch::Tensor x) {{\n{host.input_checks(variant, 'x')}\n{body}\n}}"
    cuda = "\n\n".join(
        [host.preamble(variant, "<algorithm>", "<cmath>"), device_helpers(op, warp), helper.strip("\n"), kernel, host_fn]
    )
    ext = f"{op.name}_all_ext"
    model_new = unary_model_new(ext, fn)
    return Spec(
        family=FAMILY, op=f"{op.name}_all", styles=styles, task=task, cuda_source=cuda,
        cpp_source=f"torch::Tensor {fn}(torch::Tensor x);", functions=(fn,), ext_name=ext, model_new=model_new,
        hint=hint, template=f"reduction.full.{'atomic' if op.sum_like else 'two_pass'}",
        params={"shape": list(shape), "threads": threads, "cap": cap},
    )


# (op, block reduction, shape, threads, grid cap)
_FULL_CONFIGS: tuple[tuple[str, str, tuple[int, ...], int, int], ...] = (
    ("sum", "warp-shuffle", (16, 3001), 256, 64),
    ("mean", "shared-memory", (32, 999), 512, 24),
    ("sumsq", "warp-shuffle", (7, 4099), 128, 96),
    ("max", "warp-shuffle", (24, 2047), 256, 48),
    ("min", "shared-memory", (5, 6007), 256, 40),
)


def specs() -> list[Spec]:
    """The full-reduction samples, in a fixed order (after `reduction.specs()` in the corpus)."""
    return [full_spec(*cfg, variant=i) for i, cfg in enumerate(_FULL_CONFIGS)]
