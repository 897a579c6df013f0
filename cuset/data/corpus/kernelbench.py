"""The KernelBench problem/solution format that every corpus template renders into.

A template describes one sample as a `Spec`: the reference task module (`Model`, `get_inputs`,
`get_init_inputs`), the CUDA source with its host wrapper, the C++ declaration, and the
`ModelNew` class. This module turns a spec into the three texts a `Sample` holds:

- `task`: the Python reference module, built by `task_module`;
- `instruction`: a KernelBench-style prompt that embeds the task (a few fixed phrasings, picked
  by the sample's position so the corpus is deterministic);
- `response`: the solution module (`load_inline` + `ModelNew`), built by `render_response`.

CUDA and Python snippets are written as `string.Template` text (`$name` placeholders) because
CUDA is full of braces that `str.format` would need doubled; `$` never appears in CUDA.
"""

from __future__ import annotations

import re
import string
import textwrap
from dataclasses import dataclass, field
from typing import Any

STYLES = ("guarded", "grid-stride", "shared-memory", "warp-shuffle", "vectorised", "tiled", "atomics")


@dataclass(frozen=True)
class Spec:
    """One sample before numbering: what a template produces for one parameter setting.

    `op` and `styles[0]` name the sample (its id is `{family}-{op}-{style}-{index:03d}`);
    `hint` is one sentence on how the solution works, quoted in some instructions so the
    instruction carries the implementation choice the response makes.
    """

    family: str
    op: str
    styles: tuple[str, ...]
    task: str
    cuda_source: str
    cpp_source: str
    functions: tuple[str, ...]
    ext_name: str
    model_new: str
    hint: str
    template: str
    params: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        unknown = [s for s in self.styles if s not in STYLES]
        if unknown:
            raise ValueError(f"{self.template}: unknown style(s) {unknown}; use some of {list(STYLES)}.")
        if not self.styles:
            raise ValueError(f"{self.template}: a spec needs at least one style.")


_BLOCK_PLACEHOLDER = re.compile(r"^([ \t]*)\$(\w+)[ \t]*(?:\n|\Z)", re.MULTILINE)


def fill(template: str, **values: object) -> str:
    """Dedent `template`, strip its outer blank lines and substitute `$name` placeholders.

    A placeholder alone on its line takes a multi-line value as a block: every line of the value
    gets the placeholder's indentation, so snippets are written flush-left and nest correctly;
    an empty value removes the line.
    """
    text = textwrap.dedent(template).strip("\n")
    strs = {k: str(v) for k, v in values.items()}

    def block(match: re.Match[str]) -> str:
        pad, name = match.group(1), match.group(2)
        if name not in strs:
            raise KeyError(name)
        value = strs[name]
        if not value:
            return ""
        return "\n".join(pad + line if line.strip() else "" for line in value.split("\n")) + "\n"

    text = _BLOCK_PLACEHOLDER.sub(block, text)
    return string.Template(text).substitute(strs).rstrip("\n")



def unary_model_new(ext: str, fn: str, with_dim: bool = False) -> str:
    """The `ModelNew` of a one-input task: forwards `x` (and `self.dim` when the task's Model
    takes a dimension) to the compiled function `ext.fn`."""
    if with_dim:
        return fill(
            """
            class ModelNew(nn.Module):
                def __init__(self, dim: int):
                    super().__init__()
                    self.dim = dim

                def forward(self, x: torch.Tensor) -> torch.Tensor:
                    return $ext.$fn(x.contiguous(), self.dim)
            """,
            ext=ext, fn=fn,
        )
    return fill(
        """
        class ModelNew(nn.Module):
            def __init__(self):
                super().__init__()

            def forward(self, x: torch.Tensor) -> torch.Tensor:
                return $ext.$fn(x.contiguous())
        """,
        ext=ext, fn=fn,
    )

def task_module(
    *,
    doc: str,
    forward: str,
    inputs: str,
    constants: str,
    init_args: str = "",
    init_body: str = "",
    init_inputs: str = "[]",
    functional: bool = False,
) -> str:
    """A KernelBench reference module.

    `forward` is the body of `forward` including its `def` line (4-space indented inside the
    class), `constants` the module-level shape constants, `inputs` the body of `get_inputs`.
    """
    header = "import torch\nimport torch.nn as nn\n"
    if functional:
        header += "import torch.nn.functional as F\n"
    init_sig = f"self, {init_args}" if init_args else "self"
    init = f"    def __init__({init_sig}):\n        super(Model, self).__init__()\n"
    if init_body:
        init += textwrap.indent(textwrap.dedent(init_body).strip("\n"), " " * 8) + "\n"
    doc_block = textwrap.indent(textwrap.dedent(doc).strip("\n"), " " * 4)
    forward_block = textwrap.indent(textwrap.dedent(forward).strip("\n"), " " * 4)
    inputs_block = textwrap.indent(textwrap.dedent(inputs).strip("\n"), " " * 4)
    return (
        f"{header}\n\n"
        f'class Model(nn.Module):\n    """\n{doc_block}\n    """\n\n'
        f"{init}\n{forward_block}\n\n\n"
        f"{textwrap.dedent(constants).strip()}\n\n\n"
        f"def get_inputs():\n{inputs_block}\n\n\n"
        f"def get_init_inputs():\n    return {init_inputs}\n"
    )


_RESPONSE = string.Template(
    '''import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
$cuda
"""

cpp_source = """
$cpp
"""

$ext = load_inline(
    name="$ext",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=[$functions],
    verbose=False,
)


$model_new
'''
)


def _split_top_level(args: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(args):
        if ch in "(<[{":
            depth += 1
        elif ch in ")>]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(args[start:i].strip())
            start = i + 1
    parts.append(args[start:].strip())
    return parts


def _wrap_line(line: str, width: int) -> str:
    """Break an over-long kernel signature or launch at its argument commas, clang-format style."""
    if len(line) <= width or '"' in line or not line.rstrip().endswith((") {", ");")):
        return line
    if "__global__" in line:
        open_at = line.index("(", line.index(")") + 1) if "__launch_bounds__" in line else line.index("(")
    elif ">>>(" in line:
        open_at = line.index(">>>(") + 3
    else:
        return line
    close_at = line.rindex(")")
    args = _split_top_level(line[open_at + 1 : close_at])
    indent = " " * (len(line) - len(line.lstrip()))
    pad = " " * (open_at + 1) if open_at + 1 <= 72 else indent + " " * 8
    head = line[: open_at + 1]
    rows, current = [], head
    for k, arg in enumerate(args):
        piece = arg + ("," if k < len(args) - 1 else "")
        if current.strip() and len(current) + len(piece) + 1 > width and current not in (head, pad):
            rows.append(current.rstrip())
            current = pad
        current += piece if current in (head, pad) else " " + piece
    rows.append(current + line[close_at:])
    return "\n".join(rows)


def wrap_long_lines(code: str, width: int = 120) -> str:
    """Wrap long `__global__` signatures and `<<<...>>>(...)` launches; whitespace-only change."""
    out = "\n".join(_wrap_line(line, width) for line in code.split("\n"))
    if "".join(out.split()) != "".join(code.split()):
        raise AssertionError("wrap_long_lines changed more than whitespace")
    return out


def render_response(spec: Spec) -> str:
    """The solution module: CUDA + declaration strings, `load_inline`, then `ModelNew`."""
    return _RESPONSE.substitute(
        cuda=wrap_long_lines(spec.cuda_source.strip("\n")),
        cpp=spec.cpp_source.strip("\n"),
        ext=spec.ext_name,
        functions=", ".join(f'"{f}"' for f in spec.functions),
        model_new=textwrap.dedent(spec.model_new).strip("\n"),
    )


# Several phrasings so a model does not learn one fixed prompt; the choice is by sample index.
_OPENINGS = (
    "You write custom CUDA kernels to replace the PyTorch operators in the given architecture "
    "to get speedups. You may replace any operators you like, fuse several into one kernel, or "
    "change the algorithm, as long as the result matches the reference.",
    "Your task is to speed up a PyTorch model by rewriting its operators as custom CUDA kernels "
    "compiled with torch.utils.cpp_extension.load_inline.",
    "Replace the PyTorch operations of the architecture below with hand-written CUDA kernels. "
    "The kernels are compiled inline with load_inline and must compute the same outputs as the "
    "reference Model.",
    "Optimise the following PyTorch architecture with custom CUDA. Write the kernels, a C++ host "
    "wrapper that launches them, and a module that calls the compiled extension.",
)
_CLOSINGS = (
    "Optimize the architecture named Model with custom CUDA operators! Name your optimized output "
    "architecture ModelNew. Output the new code in codeblocks. Please generate real code, NOT "
    "pseudocode, make sure the code compiles and is fully functional. Just output the new model "
    "code, no other text, and NO testing code!",
    "Name the optimised class ModelNew; it takes the same constructor arguments as Model and its "
    "forward takes the same inputs. Return the complete Python module in one code block, with no "
    "test code.",
    "Write a class ModelNew with the same interface as Model. Inputs are float32 CUDA tensors. "
    "Reply with the full, compilable Python module only.",
)


def render_instruction(task: str, hint: str, index: int) -> str:
    """The prompt for sample number `index`: opening, the task in a fence, optional hint, closing."""
    opening = _OPENINGS[index % len(_OPENINGS)]
    closing = _CLOSINGS[(index // len(_OPENINGS)) % len(_CLOSINGS)]
    parts = [opening, "You are given the following architecture:", f"```python\n{task.rstrip()}\n```"]
    if index % 3 != 2:
        parts.append(f"Implementation note: {hint}")
    parts.append(closing)
    return "\n\n".join(parts) + "\n"
