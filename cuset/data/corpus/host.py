"""Host-side C++ idioms the templates share: includes, input checks, launch checks, grid sizing.

Every solution's host wrapper validates its inputs, sizes the grid, launches and checks the
launch. Real extension code does these few things in a handful of common ways, and the corpus
rotates between them (a `variant` integer picks one) so a model sees each idiom, not one
boilerplate block repeated 200 times. Nothing here is kernel math.
"""

from __future__ import annotations

BASE_INCLUDES = ("<torch/extension.h>", "<cuda_runtime.h>", "<c10/cuda/CUDAException.h>")

CHECK_MACROS = (
    '#define CHECK_CUDA(x) TORCH_CHECK((x).is_cuda(), #x " must be a CUDA tensor")\n'
    '#define CHECK_CONTIGUOUS(x) TORCH_CHECK((x).is_contiguous(), #x " must be contiguous")\n'
    '#define CHECK_FLOAT(x) TORCH_CHECK((x).scalar_type() == torch::kFloat32, #x " must be float32")\n'
    "#define CHECK_INPUT(x) CHECK_CUDA(x); CHECK_CONTIGUOUS(x); CHECK_FLOAT(x)"
)


def includes(*extra: str, stream: bool = False) -> str:
    """`#include` lines: the base set, `<c10/cuda/CUDAStream.h>` for the current stream, extras."""
    names = list(BASE_INCLUDES)
    if stream:
        names.append("<c10/cuda/CUDAStream.h>")
    names += [e for e in extra if e not in names]
    return "\n".join(f"#include {n}" for n in names)


def preamble(variant: int, *extra: str, stream: bool = False) -> str:
    """Includes, plus the CHECK_* macros when this variant checks inputs through macros."""
    text = includes(*extra, stream=stream)
    if uses_macros(variant):
        text += "\n\n" + CHECK_MACROS
    return text


def uses_macros(variant: int) -> bool:
    """Every third variant validates inputs with the CHECK_INPUT macro family."""
    return variant % 3 == 0


def input_checks(variant: int, *names: str, indent: int = 4) -> str:
    """Validation of float32, contiguous CUDA tensors, as macros or as explicit TORCH_CHECKs."""
    pad = " " * indent
    if uses_macros(variant):
        return "\n".join(f"{pad}CHECK_INPUT({n});" for n in names)
    lines = []
    for n in names:
        lines.append(f'{pad}TORCH_CHECK({n}.is_cuda(), "{n} must be a CUDA tensor");')
        lines.append(f'{pad}TORCH_CHECK({n}.scalar_type() == torch::kFloat32, "{n} must be float32");')
        lines.append(f'{pad}TORCH_CHECK({n}.is_contiguous(), "{n} must be contiguous");')
    return "\n".join(lines)


def launch_check(variant: int, kernel: str, indent: int = 4) -> str:
    """After a launch: C10's launch check, or an explicit cudaGetLastError with the kernel's name."""
    pad = " " * indent
    if variant % 2 == 0:
        return f"{pad}C10_CUDA_KERNEL_LAUNCH_CHECK();"
    return (
        f"{pad}const cudaError_t err = cudaGetLastError();\n"
        f'{pad}TORCH_CHECK(err == cudaSuccess, "{kernel} launch failed: ", cudaGetErrorString(err));'
    )


def stream_arg(stream: bool, smem: str = "0") -> str:
    """The optional launch-config tail: `, smem, stream` on the current stream, `, smem` or ``."""
    if stream:
        return f", {smem}, c10::cuda::getCurrentCUDAStream()"
    return "" if smem == "0" else f", {smem}"


def grid_stride_blocks(threads_var: str, count: str, cap: int | None, indent: int = 4) -> str:
    """Grid size for a grid-stride loop: enough blocks for `count`, capped.

    `cap=None` caps at a few resident blocks per SM (queried from the device); an int is a fixed
    cap, which keeps the grid small enough that every thread loops several times.
    """
    pad = " " * indent
    if cap is None:
        return (
            f"{pad}int device = 0;\n"
            f"{pad}C10_CUDA_CHECK(cudaGetDevice(&device));\n"
            f"{pad}int num_sms = 0;\n"
            f"{pad}C10_CUDA_CHECK(cudaDeviceGetAttribute(&num_sms, cudaDevAttrMultiProcessorCount, device));\n"
            f"{pad}// A few resident blocks per SM keep the memory system busy; the loop covers the rest.\n"
            f"{pad}const int64_t max_blocks = static_cast<int64_t>(num_sms) * 4;\n"
            f"{pad}const int blocks = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(({count} + {threads_var} - 1) / {threads_var}, max_blocks)));"
        )
    return (
        f"{pad}const int blocks = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(({count} + {threads_var} - 1) / {threads_var}, {cap})));"
    )
