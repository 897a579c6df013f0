"""The kernel-only protocol: the task's Python wrapper is given, the model writes the CUDA source.

The main ("full") protocol asks for a whole solution module: the CUDA source, its C++
declarations, the load_inline call and ModelNew. A small model can fail all of that on the
Python scaffold alone (issue 31: 0/49 on the full protocol, most failures before any kernel
runs). This protocol isolates the CUDA-sensitive part the paper is about: the prompt shows the
task and the task's reference module with its CUDA source string replaced by PLACEHOLDER (the
wrapper: includes of the Python side, the `cpp_source` declarations, the load_inline call and
ModelNew), and asks for the CUDA source only. The reply's source is spliced back into the
wrapper in place of the placeholder, and that module is the candidate the evaluator checks,
with the same checks as a full-protocol candidate.

Results of the two protocols are not comparable: every table of a kernel-only run names it
(cuset.generate.config.PROTOCOLS; EvalConfig.protocol, an experiment's `evaluation.options.protocol`).

    wrapper = wrapper_of(reference_text)                  # ValueError when it has no CUDA string
    messages = build_prompt(task_text, wrapper, one_shot)
    found = extract(reply, wrapper)                         # an extract.Extraction; found.code is the module

Where the source is found in a reply, in order: a fenced block tagged cuda / cu / c++ / cpp / c
(terminated before unterminated, longer before shorter); a Python module in the reply that sets
the CUDA string itself (the model wrote the whole solution anyway: its string is taken, the rest
of its module dropped); an untagged fence; else the bare reply when it reads as C++ (a
`__global__` or an `#include`). Nothing here raises on odd replies.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Any

from cuset.generate.extract import FENCE, Extraction, extract_code, fenced_blocks
from cuset.generate.prompts import OneShot, load_one_shot

PLACEHOLDER = "/* YOUR CUDA SOURCE HERE */"
CUDA_TAGS = ("cuda", "cu", "c++", "cpp", "c", "cxx", "cc")
_LOOKS_LIKE_CUDA = re.compile(r"__global__|^\s*#\s*include\b", re.MULTILINE)


@dataclass(frozen=True)
class Wrapper:
    """A reference module with its CUDA source string cut out.

    text          the module with the string literal replaced by a raw string holding PLACEHOLDER
    declarations  the C++ declarations (cpp_sources) the CUDA source must define
    variable      the name the CUDA string is bound to ("" when passed inline to load_inline)
    source        the reference's own CUDA source (the one-shot example's answer)
    """

    text: str
    declarations: str
    variable: str
    source: str


def _literal_span(text: str, node: ast.expr) -> tuple[int, int]:
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    assert node.end_lineno is not None and node.end_col_offset is not None
    return starts[node.lineno - 1] + node.col_offset, starts[node.end_lineno - 1] + node.end_col_offset


def _string_of(node: ast.expr | None, strings: dict[str, ast.expr]) -> tuple[str, ast.expr | None, str]:
    """(value, the literal node, the variable) of a load_inline source argument: a string, a
    name bound to one at module level, or a one-element list of either."""
    if isinstance(node, ast.List | ast.Tuple) and len(node.elts) == 1:
        node = node.elts[0]
    if isinstance(node, ast.Name) and node.id in strings:
        return _string_of(strings[node.id], strings)[0], strings[node.id], node.id
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value, node, ""
    return "", None, ""


def wrapper_of(reference: str, where: str = "the reference") -> Wrapper:
    """The wrapper of a solution module (see the module docstring); a ValueError naming `where`
    when the module has no load_inline call with one CUDA source string to cut out."""
    try:
        tree = ast.parse(reference)
    except SyntaxError as exc:
        raise ValueError(f"{where}: line {exc.lineno}: {exc.msg}; the kernel-only protocol needs a reference module that parses.") from None
    strings = {t.id: node.value for node in tree.body if isinstance(node, ast.Assign)
               for t in node.targets if isinstance(t, ast.Name) and isinstance(node.value, ast.Constant | ast.List)}
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", getattr(n.func, "attr", "")) == "load_inline"]
    for call in calls:
        args = {k.arg: k.value for k in call.keywords}
        source, literal, variable = _string_of(args.get("cuda_sources"), strings)
        if literal is None or not source.strip():
            continue
        declarations = _string_of(args.get("cpp_sources"), strings)[0]
        begin, end = _literal_span(reference, literal)
        text = reference[:begin] + f'r"""\n{PLACEHOLDER}\n"""' + reference[end:]
        return Wrapper(text, declarations.strip(), variable, source.strip("\n"))
    raise ValueError(f"{where}: no load_inline(...) call whose cuda_sources is one string (or a name bound to one) was found; "
                     "the kernel-only protocol needs a reference solution whose CUDA source can be cut out.")


def instruction(task_text: str, wrapper: Wrapper) -> str:
    """The user turn: the task, the wrapper and what to write. Not the corpus's wording (that asks
    for a whole module, which would contradict the wrapper), so no prompt variants."""
    declared = f" It must define:\n\n```cpp\n{wrapper.declarations}\n```\n" if wrapper.declarations else "\n"
    return ("Write CUDA kernels for the architecture below: they must compute the same outputs as the reference Model.\n\n"
            f"```python\n{task_text.strip()}\n```\n\n"
            "The Python side is written for you: the wrapper below compiles your CUDA source with load_inline and calls it from "
            f"ModelNew. Write only the CUDA source (the kernels and the host functions), which replaces {PLACEHOLDER}.{declared}\n"
            f"```python\n{wrapper.text.rstrip()}\n```\n\n"
            "Reply with the CUDA source in one ```cuda code block.")


def build_prompt(task_text: str, wrapper: Wrapper, one_shot: OneShot | bool | str | None = True) -> list[dict[str, str]]:
    """Chat messages: optionally the example task with its own wrapper and CUDA source, then the task."""
    if not task_text.strip():
        raise ValueError("The task text is empty: pass the KernelBench module (Model, get_inputs, get_init_inputs).")
    example = one_shot if isinstance(one_shot, OneShot) or one_shot is None else load_one_shot(one_shot)
    messages = []
    if example is not None:
        shown = wrapper_of(example.solution, f"one-shot example {example.source}")
        messages += [
            {"role": "user", "content": instruction(example.task, shown)},
            {"role": "assistant", "content": f"```cuda\n{shown.source}\n```"},
        ]
    messages.append({"role": "user", "content": instruction(task_text, wrapper)})
    return messages


def _own_string(code: str) -> str:
    """The CUDA string of a whole module the model wrote ("" when it has none)."""
    try:
        return wrapper_of(code).source
    except ValueError:
        return ""


def _before_first_fence(reply: str) -> str:
    """The reply's text above its first fence line (the whole reply when it has none)."""
    lines = reply.split("\n")
    first = next((n for n, line in enumerate(lines) if FENCE.match(line)), len(lines))
    return "\n".join(lines[:first])


def cuda_source_of(reply: str) -> tuple[str, str, str]:
    """(source, method, note) found in `reply` (see the module docstring); ("", "none", why) when none."""
    if not reply.strip():
        return "", "none", "the reply is empty"
    blocks = fenced_blocks(reply)
    tagged = [b for b in blocks if b.tag in CUDA_TAGS and b.text.strip()]
    if tagged:
        best = max(tagged, key=lambda b: (b.terminated, len(b.text)))
        return best.text, "fence" if best.terminated else "open_fence", "" if best.terminated else "the code block is not closed (the reply may be cut short)"
    for block in [*blocks, None]:
        own = _own_string(block.text if block is not None else reply)
        if own:
            return own, "module", "the reply is a whole module: its CUDA string was taken, the rest dropped"
    lead = _before_first_fence(reply)
    if blocks and _LOOKS_LIKE_CUDA.search(lead) and not any(_LOOKS_LIKE_CUDA.search(b.text) for b in blocks):
        return lead.strip("\n"), "bare", "the source ends at a fence that opens nothing (the text after it was dropped)"
    untagged = [b for b in blocks if not b.tag and b.text.strip()]
    if untagged:
        best = max(untagged, key=lambda b: (b.terminated, len(b.text)))
        return best.text, "fence" if best.terminated else "open_fence", "an untagged code block"
    if not blocks and _LOOKS_LIKE_CUDA.search(reply):
        return reply.strip("\n"), "bare", ""
    return "", "none", f"{len(blocks)} code block(s), none holds CUDA source" if blocks else "no code block and no CUDA source in the reply"


def splice(wrapper: Wrapper, source: str) -> str:
    """The wrapper with `source` in place of the placeholder: a raw triple-quoted string where
    the source allows one (so its lines keep their numbers in the module), else a quoted literal."""
    body = source.strip("\n")
    literal = f'r"""\n{body}\n"""' if '"""' not in body else repr("\n" + body + "\n")
    return wrapper.text.replace(f'r"""\n{PLACEHOLDER}\n"""', literal, 1)


def extract(reply: str, wrapper: Wrapper) -> Extraction:
    """The candidate module of a kernel-only reply: its CUDA source spliced into the wrapper."""
    source, method, note = cuda_source_of(reply)
    n_blocks = len(fenced_blocks(reply))
    if not source.strip():
        return Extraction("", "none", note, False, n_blocks)
    code = splice(wrapper, source)
    try:
        ast.parse(code)
    except SyntaxError as exc:  # cannot happen for a well-formed wrapper; say so rather than hide it
        return Extraction(code, method, f"the spliced module does not parse (line {exc.lineno}: {exc.msg})", False, n_blocks)
    return Extraction(code, method, note, True, n_blocks)


def extraction(reply: str, wrapper: Wrapper | None) -> Extraction:
    """A reply's candidate under its protocol: kernel-only (its source spliced into `wrapper`),
    or, with no wrapper, the full protocol's module (extract.extract_code)."""
    return extract(reply, wrapper) if wrapper is not None else extract_code(reply)


def wrappers_of(references: dict[str, Any]) -> dict[str, Wrapper]:
    """task id -> Wrapper of each task's reference text; a ValueError naming the first task
    without a usable reference."""
    out = {}
    for task_id, text in references.items():
        if not text:
            raise ValueError(f"task {task_id!r}: no reference solution, so no wrapper to give: the kernel-only protocol needs "
                             "tasks with a reference (the bundled suite has one for every task).")
        out[task_id] = wrapper_of(text, f"task {task_id!r}'s reference")
    return out
