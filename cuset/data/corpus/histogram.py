"""Histogram and atomic-counting templates.

Binning is exact on purpose: values in [0, 1) go to bin `floor(x * bins)` clamped to the last
bin, computed with the same single float multiply as the reference, so GPU and reference agree
bit for bit (an edge-case value can never land in a neighbouring bin). Counts are returned as
float32 like the reference's `.float()`.

- global atomics (`guarded` / `grid-stride`): every element does one `atomicAdd` on global bins;
- privatised (`shared-memory`): each block counts into `extern __shared__` bins (size passed
  at launch), then merges its non-zero bins into the global histogram, so global atomics drop
  from one per element to one per bin per block;
- per-row histograms: one block per row, bins in shared memory, written without global atomics;
- counting (in `counting`): warp-aggregated atomics, a shuffle block reduction, and
  `__syncthreads_count`.
"""

from __future__ import annotations

from cuset.data.corpus import host
from cuset.data.corpus.kernelbench import Spec, fill, task_module

FAMILY = "histogram"

_BIN = "min(max(static_cast<int>(floorf($v * fbins)), 0), bins - 1)"


def shape_constants(shape: tuple[int, ...]) -> tuple[str, str]:
    names = ["n"] if len(shape) == 1 else ["batch_size", "length"]
    return "\n".join(f"{n} = {s}" for n, s in zip(names, shape, strict=True)), ", ".join(names)


def _hist_task(shape: tuple[int, ...], bins: int, kind: str) -> str:
    consts, dims = shape_constants(shape)
    if kind == "bincount":
        return task_module(
            doc="Counts the occurrences of each integer label 0..bins-1 (labels are stored as floats).",
            init_args="bins: int", init_body="self.bins = bins",
            forward="def forward(self, x: torch.Tensor) -> torch.Tensor:\n"
            "    return torch.bincount(x.long().flatten(), minlength=self.bins).float()",
            constants=f"{consts}\nbins = {bins}", inputs=f"x = torch.randint(0, bins, ({dims},)).float()\nreturn [x]",
            init_inputs="[bins]",
        )
    post = {
        "count": "counts.float()",
        "cumulative": "torch.cumsum(counts.float(), dim=0)",
        "density": "counts.float() / x.numel()",
    }[kind]
    doc = {
        "count": "Histogram of values in [0, 1) over `bins` equal-width bins.",
        "cumulative": "Cumulative histogram (running count up to each bin) of values in [0, 1).",
        "density": "Normalised histogram (fraction of elements per bin) of values in [0, 1).",
    }[kind]
    return task_module(
        doc=doc, init_args="bins: int", init_body="self.bins = bins",
        forward="def forward(self, x: torch.Tensor) -> torch.Tensor:\n"
        "    idx = torch.floor(x * self.bins).long().clamp(0, self.bins - 1)\n"
        "    counts = torch.bincount(idx.flatten(), minlength=self.bins)\n"
        f"    return {post}",
        constants=f"{consts}\nbins = {bins}", inputs=f"x = torch.rand({dims})\nreturn [x]", init_inputs="[bins]",
    )


def model_new_source(ext: str, fn: str, init: str, call: str) -> str:
    args = ", ".join(a.split(":")[0] for a in init.split(", ")) if init else ""
    sig = f"self, {init}" if init else "self"
    store = "".join(f"\n        self.{a} = {a}" for a in args.split(", ")) if args else ""
    return (
        "class ModelNew(nn.Module):\n"
        f"    def __init__({sig}):\n"
        f"        super().__init__(){store}\n\n"
        "    def forward(self, x: torch.Tensor) -> torch.Tensor:\n"
        f"        return {ext}.{fn}({call})"
    )


def histogram_spec(shape: tuple[int, ...], bins: int, method: str, threads: int, variant: int,
                   kind: str = "count", cap: int | None = None) -> Spec:
    """Whole-tensor histogram. method: global | global-stride | global-int | private; kind: count | bincount | cumulative | density."""
    fbins_line = "" if kind == "bincount" else "const float fbins = static_cast<float>(bins);"
    bin_expr = "static_cast<int>(x[i])" if kind == "bincount" else fill(_BIN, v="x[i]")
    guard_bin = kind == "bincount"
    if method in ("global", "global-int"):
        ctype = "int" if method == "global-int" else "float"
        one = "1" if ctype == "int" else "1.0f"
        update = (
            f"const int b = {bin_expr};\nif (b >= 0 && b < bins) {{\n    atomicAdd(&hist[b], {one});\n}}"
            if guard_bin else f"atomicAdd(&hist[{bin_expr}], {one});"
        )
        kernel = fill(
            """
            __global__ void __launch_bounds__($threads) histogram_kernel(const float* __restrict__ x, $ctype* __restrict__ hist,
                                                                         int64_t n, int bins) {
                $fbins_line
                const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
                if (i < n) {
                    $update
                }
            }
            """, threads=threads, ctype=ctype, update=update, fbins_line=fbins_line,
        )
        grid = "const int blocks = static_cast<int>((n + threads - 1) / threads);"
        styles: tuple[str, ...] = ("guarded", "atomics")
        hint = f"One thread per element ({threads} per block) doing an atomicAdd on the global bin{' (int counters, converted at the end)' if ctype == 'int' else ''}."
        smem = "0"
    elif method == "global-stride":
        ctype = "float"
        update = (
            f"const int b = {bin_expr};\nif (b >= 0 && b < bins) {{\n    atomicAdd(&hist[b], 1.0f);\n}}"
            if guard_bin else f"atomicAdd(&hist[{bin_expr}], 1.0f);"
        )
        kernel = fill(
            """
            __global__ void histogram_kernel(const float* __restrict__ x, float* __restrict__ hist, int64_t n, int bins) {
                $fbins_line
                const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
                for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
                    $update
                }
            }
            """, update=update, fbins_line=fbins_line,
        )
        grid = host.grid_stride_blocks("threads", "n", cap, indent=0)
        styles = ("grid-stride", "atomics")
        hint = f"A grid-stride loop ({threads} threads per block) with one global atomicAdd per element."
        smem = "0"
    else:
        ctype = "unsigned int"
        update = (
            f"const int b = {bin_expr};\nif (b >= 0 && b < bins) {{\n    atomicAdd(&local[b], 1u);\n}}"
            if guard_bin else f"atomicAdd(&local[{bin_expr}], 1u);"
        )
        kernel = fill(
            """
            // Privatised histogram: shared-memory atomics are far cheaper than global ones, and the
            // block merges into global memory once per bin instead of once per element.
            __global__ void __launch_bounds__($threads) histogram_kernel(const float* __restrict__ x, unsigned int* __restrict__ hist,
                                                                         int64_t n, int bins) {
                extern __shared__ unsigned int local[];
                for (int b = threadIdx.x; b < bins; b += blockDim.x) {
                    local[b] = 0u;
                }
                __syncthreads();
                $fbins_line
                const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
                for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
                    $update
                }
                __syncthreads();
                for (int b = threadIdx.x; b < bins; b += blockDim.x) {
                    const unsigned int c = local[b];
                    if (c != 0u) {
                        atomicAdd(&hist[b], c);
                    }
                }
            }
            """, threads=threads, update=update, fbins_line=fbins_line,
        )
        grid = (
            host.grid_stride_blocks("threads", "n", cap, indent=0)
            + "\nconst size_t smem = static_cast<size_t>(bins) * sizeof(unsigned int);"
        )
        styles = ("shared-memory", "atomics", "grid-stride")
        hint = f"Privatise the bins in dynamic shared memory per block ({threads} threads, grid-stride), then merge with one global atomicAdd per bin."
        smem = "smem"
    kname = "histogram_kernel"
    if ctype == "float":
        alloc = "auto hist = torch::zeros({bins}, x.options());"
        ptr = "hist.data_ptr<float>()"
        result = "hist"
    else:
        dtype = "torch::kInt32"
        alloc = f"auto hist = torch::zeros({{bins}}, x.options().dtype({dtype}));"
        ptr = "hist.data_ptr<int>()" if ctype == "int" else "reinterpret_cast<unsigned int*>(hist.data_ptr<int>())"
        result = "hist.to(torch::kFloat32)"
    extra_kernel = ""
    if kind == "cumulative":
        extra_kernel = fill(
            """
            // Inclusive scan of the bin counts in one block (Hillis-Steele, bins <= blockDim.x).
            __global__ void cumulative_kernel(const unsigned int* __restrict__ hist, float* __restrict__ out, int bins) {
                extern __shared__ float scan_buf[];
                const int t = threadIdx.x;
                scan_buf[t] = t < bins ? static_cast<float>(hist[t]) : 0.0f;
                __syncthreads();
                for (int offset = 1; offset < blockDim.x; offset <<= 1) {
                    const float add = t >= offset ? scan_buf[t - offset] : 0.0f;
                    __syncthreads();
                    scan_buf[t] += add;
                    __syncthreads();
                }
                if (t < bins) {
                    out[t] = scan_buf[t];
                }
            }
            """
        )
        if method != "private":
            raise ValueError("the cumulative histogram template uses the privatised kernel")
        finish = fill(
            """
            TORCH_CHECK(bins <= 1024, "the cumulative step scans the bins in one block");
            auto out = torch::empty({bins}, x.options());
            int scan_threads = 32;
            while (scan_threads < bins) {
                scan_threads <<= 1;
            }
            cumulative_kernel<<<1, scan_threads, scan_threads * sizeof(float)>>>(reinterpret_cast<const unsigned int*>(hist.data_ptr<int>()),
                                                                               out.data_ptr<float>(), bins);
            C10_CUDA_KERNEL_LAUNCH_CHECK();
            return out;
            """
        )
        hint += " A second one-block kernel scans the bins."
    elif kind == "density":
        finish = "return hist.to(torch::kFloat32).div_(static_cast<double>(n));" if ctype != "float" else "return hist.div_(static_cast<double>(n));"
    else:
        finish = f"return {result};"
    launch_tail = host.stream_arg(False, smem)
    host_fn = fill(
        """
        torch::Tensor $fn(torch::Tensor x, int64_t bins_arg) {
        $checks
            TORCH_CHECK(bins_arg > 0, "bins must be positive");
            const int bins = static_cast<int>(bins_arg);
            const int64_t n = x.numel();
            $alloc
            if (n == 0) {
                return hist.to(torch::kFloat32);
            }
            constexpr int threads = $threads;
            $grid
            $kname<<<blocks, threads$launch_tail>>>(x.data_ptr<float>(), $ptr, n, bins);
        $check
            $finish
        }
        """,
        fn=f"{kind}_histogram_cuda", checks=host.input_checks(variant, "x"), alloc=alloc, threads=threads, grid=grid,
        kname=kname, launch_tail=launch_tail, ptr=ptr, check=host.launch_check(variant, kname), finish=finish,
    )
    fn = f"{kind}_histogram_cuda"
    ext = f"{kind}_histogram_ext"
    op = {"count": "histogram", "bincount": "bincount", "cumulative": "cumulative_histogram", "density": "density_histogram"}[kind]
    parts = [host.preamble(variant, *(("<algorithm>",) if method != "global" and method != "global-int" else ())), kernel]
    if extra_kernel:
        parts.append(extra_kernel)
    parts.append(host_fn)
    return Spec(
        family=FAMILY, op=op, styles=styles, task=_hist_task(shape, bins, kind), cuda_source="\n\n".join(parts),
        cpp_source=f"torch::Tensor {fn}(torch::Tensor x, int64_t bins_arg);", functions=(fn,), ext_name=ext,
        model_new=model_new_source(ext, fn, "bins: int", "x.contiguous(), self.bins"), hint=hint,
        template=f"histogram.{method}.{kind}", params={"shape": list(shape), "bins": bins, "threads": threads, "cap": cap},
    )


def row_histogram_spec(rows: int, length: int, bins: int, threads: int, variant: int) -> Spec:
    """Per-row histograms (rows, bins): one block per row counting in shared memory."""
    kernel = fill(
        """
        // One block per row: the block owns its row's bins, so after counting in shared memory it
        // writes them out directly; no global atomics are needed.
        __global__ void __launch_bounds__($threads) row_histogram_kernel(const float* __restrict__ x, float* __restrict__ out,
                                                                         int length, int bins) {
            extern __shared__ int counts[];
            for (int b = threadIdx.x; b < bins; b += blockDim.x) {
                counts[b] = 0;
            }
            __syncthreads();
            const float fbins = static_cast<float>(bins);
            const float* xr = x + static_cast<int64_t>(blockIdx.x) * length;
            for (int i = threadIdx.x; i < length; i += blockDim.x) {
                atomicAdd(&counts[$bin], 1);
            }
            __syncthreads();
            float* out_row = out + static_cast<int64_t>(blockIdx.x) * bins;
            for (int b = threadIdx.x; b < bins; b += blockDim.x) {
                out_row[b] = static_cast<float>(counts[b]);
            }
        }
        """, threads=threads, bin=fill(_BIN, v="xr[i]"),
    )
    host_fn = fill(
        """
        torch::Tensor row_histogram_cuda(torch::Tensor x, int64_t bins_arg) {
        $checks
            TORCH_CHECK(x.dim() == 2, "x must be (rows, length)");
            const int bins = static_cast<int>(bins_arg);
            TORCH_CHECK(bins > 0 && bins * sizeof(int) <= 48 * 1024, "bins must fit in shared memory");
            const int rows = static_cast<int>(x.size(0));
            const int length = static_cast<int>(x.size(1));
            auto out = torch::empty({rows, bins}, x.options());
            if (rows == 0) {
                return out;
            }
            const size_t smem = static_cast<size_t>(bins) * sizeof(int);
            row_histogram_kernel<<<rows, $threads, smem>>>(x.data_ptr<float>(), out.data_ptr<float>(), length, bins);
        $check
            return out;
        }
        """, checks=host.input_checks(variant, "x"), threads=threads, check=host.launch_check(variant, "row_histogram_kernel"),
    )
    task = task_module(
        doc="Per-row histograms of values in [0, 1): out[r, b] counts the elements of row r in bin b.",
        init_args="bins: int", init_body="self.bins = bins",
        forward="def forward(self, x: torch.Tensor) -> torch.Tensor:\n"
        "    idx = torch.floor(x * self.bins).long().clamp(0, self.bins - 1)\n"
        "    return F.one_hot(idx, self.bins).sum(dim=1).float()",
        constants=f"batch_size = {rows}\nlength = {length}\nbins = {bins}",
        inputs="x = torch.rand(batch_size, length)\nreturn [x]", init_inputs="[bins]", functional=True,
    )
    return Spec(
        family=FAMILY, op="row_histogram", styles=("shared-memory", "atomics"), task=task,
        cuda_source="\n\n".join([host.preamble(variant, "<algorithm>"), kernel, host_fn]),
        cpp_source="torch::Tensor row_histogram_cuda(torch::Tensor x, int64_t bins_arg);", functions=("row_histogram_cuda",),
        ext_name="row_histogram_ext", model_new=model_new_source("row_histogram_ext", "row_histogram_cuda", "bins: int", "x.contiguous(), self.bins"),
        hint=f"One block of {threads} threads per row with the row's bins in dynamic shared memory (shared atomics only).",
        template="histogram.row", params={"rows": rows, "length": length, "bins": bins, "threads": threads},
    )


def joint_histogram_spec(n: int, bins_x: int, bins_y: int, threads: int, cap: int, variant: int) -> Spec:
    """2-D histogram of (x, y) pairs in [0, 1)^2, privatised in shared memory."""
    kernel = fill(
        """
        __global__ void __launch_bounds__($threads) joint_histogram_kernel(const float* __restrict__ x, const float* __restrict__ y,
                                                                           unsigned int* __restrict__ hist, int64_t n, int bins_x, int bins_y) {
            extern __shared__ unsigned int local[];
            const int num_bins = bins_x * bins_y;
            for (int b = threadIdx.x; b < num_bins; b += blockDim.x) {
                local[b] = 0u;
            }
            __syncthreads();
            const float fx = static_cast<float>(bins_x);
            const float fy = static_cast<float>(bins_y);
            const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
            for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
                const int bx = min(max(static_cast<int>(floorf(x[i] * fx)), 0), bins_x - 1);
                const int by = min(max(static_cast<int>(floorf(y[i] * fy)), 0), bins_y - 1);
                atomicAdd(&local[bx * bins_y + by], 1u);
            }
            __syncthreads();
            for (int b = threadIdx.x; b < num_bins; b += blockDim.x) {
                if (local[b] != 0u) {
                    atomicAdd(&hist[b], local[b]);
                }
            }
        }
        """, threads=threads,
    )
    host_fn = fill(
        """
        torch::Tensor joint_histogram_cuda(torch::Tensor x, torch::Tensor y, int64_t bins_x, int64_t bins_y) {
        $checks
            TORCH_CHECK(x.numel() == y.numel(), "x and y must have the same number of elements");
            const int bx = static_cast<int>(bins_x);
            const int by = static_cast<int>(bins_y);
            TORCH_CHECK(bx > 0 && by > 0 && bx * by * sizeof(unsigned int) <= 48 * 1024, "bins must fit in shared memory");
            auto hist = torch::zeros({bx, by}, x.options().dtype(torch::kInt32));
            const int64_t n = x.numel();
            if (n == 0) {
                return hist.to(torch::kFloat32);
            }
            constexpr int threads = $threads;
            const int blocks = static_cast<int>(std::min<int64_t>((n + threads - 1) / threads, $cap));
            const size_t smem = static_cast<size_t>(bx) * by * sizeof(unsigned int);
            joint_histogram_kernel<<<blocks, threads, smem>>>(x.data_ptr<float>(), y.data_ptr<float>(),
                                                              reinterpret_cast<unsigned int*>(hist.data_ptr<int>()), n, bx, by);
        $check
            return hist.to(torch::kFloat32);
        }
        """, checks=host.input_checks(variant, "x", "y"), threads=threads, cap=cap,
        check=host.launch_check(variant, "joint_histogram_kernel"),
    )
    task = task_module(
        doc="Joint 2-D histogram of (x, y) pairs with values in [0, 1).",
        init_args="bins_x: int, bins_y: int", init_body="self.bins_x = bins_x\nself.bins_y = bins_y",
        forward="def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:\n"
        "    ix = torch.floor(x * self.bins_x).long().clamp(0, self.bins_x - 1)\n"
        "    iy = torch.floor(y * self.bins_y).long().clamp(0, self.bins_y - 1)\n"
        "    counts = torch.bincount((ix * self.bins_y + iy).flatten(), minlength=self.bins_x * self.bins_y)\n"
        "    return counts.float().view(self.bins_x, self.bins_y)",
        constants=f"n = {n}\nbins_x = {bins_x}\nbins_y = {bins_y}",
        inputs="x = torch.rand(n)\ny = torch.rand(n)\nreturn [x, y]", init_inputs="[bins_x, bins_y]",
    )
    model_new = fill(
        """
        class ModelNew(nn.Module):
            def __init__(self, bins_x: int, bins_y: int):
                super().__init__()
                self.bins_x = bins_x
                self.bins_y = bins_y

            def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
                return joint_histogram_ext.joint_histogram_cuda(x.contiguous(), y.contiguous(), self.bins_x, self.bins_y)
        """
    )
    return Spec(
        family=FAMILY, op="joint_histogram", styles=("shared-memory", "atomics", "grid-stride"), task=task,
        cuda_source="\n\n".join([host.preamble(variant, "<algorithm>"), kernel, host_fn]),
        cpp_source="torch::Tensor joint_histogram_cuda(torch::Tensor x, torch::Tensor y, int64_t bins_x, int64_t bins_y);",
        functions=("joint_histogram_cuda",), ext_name="joint_histogram_ext", model_new=model_new,
        hint=f"Privatise the {bins_x}x{bins_y} bins in dynamic shared memory, grid-stride over the pairs, merge with global atomics.",
        template="histogram.joint", params={"n": n, "bins_x": bins_x, "bins_y": bins_y, "threads": threads, "cap": cap},
    )


def specs() -> list[Spec]:
    """All histogram / counting samples, in a fixed order."""
    return [
        histogram_spec((16, 1000), 10, "global", 256, variant=0),
        histogram_spec((8, 2049), 64, "global", 128, variant=1),
        histogram_spec((5003,), 100, "global-int", 512, variant=2),
        histogram_spec((12, 999), 32, "global-stride", 256, variant=3, cap=20),
        histogram_spec((4, 3001), 256, "global-stride", 128, variant=4, cap=None),
        histogram_spec((16, 1500), 64, "private", 256, variant=5, cap=32),
        histogram_spec((32, 777), 256, "private", 128, variant=6, cap=48),
        histogram_spec((8, 2500), 1000, "private", 512, variant=7, cap=16),
        histogram_spec((10007,), 100, "private", 256, variant=8, cap=8),
        histogram_spec((20011,), 50, "global", 256, variant=9, kind="bincount"),
        histogram_spec((4, 4001), 500, "private", 256, variant=10, kind="bincount", cap=24),
        histogram_spec((10000,), 128, "private", 256, variant=11, kind="cumulative", cap=16),
        histogram_spec((4, 2500), 512, "private", 128, variant=12, kind="cumulative", cap=40),
        histogram_spec((6001,), 50, "global-stride", 256, variant=13, kind="density", cap=12),
        row_histogram_spec(32, 500, 16, 128, variant=14),
        row_histogram_spec(8, 2000, 64, 256, variant=15),
        row_histogram_spec(64, 300, 100, 128, variant=16),
        joint_histogram_spec(6000, 16, 16, 256, 16, variant=17),
        joint_histogram_spec(12345, 8, 32, 128, 40, variant=18),
    ]
