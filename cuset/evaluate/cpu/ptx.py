"""Inline PTX in device code -> C++ for the CPU emulator, for a small, exact subset.

An `asm("..." : outputs : inputs)` statement in a __global__ or __device__ function is PTX,
which a CPU cannot assemble. The instructions below have an exact C++ meaning and are
rewritten into one expression (the statement's `;` stays, line numbers are kept); any other
instruction makes the whole statement `Unsupported`, naming the instruction. Asm in host code
is the host compiler's own (x86 here), as with nvcc, and is left alone by the caller.

    mov.{b,u,s}{32,64} d, %globaltimer | %globaltimer_lo | %globaltimer_hi | %clock | %clock64
                          | %laneid | %warpid | %smid | %nsmid | %lanemask_lt | another operand
    {add,sub,mul,fma}.{rn,rz,rm,rp}.{f32,f64}, {div,sqrt,rcp}.{rn,rz,rm,rp}.{f32,f64}
        (add/sub/mul without a rounding modifier round to nearest, as PTX says; directed
        rounding is exact: see cuset_rounding.h)
    vabsdiff4.u32.u32.u32.add d, a, b, c   (c + the sum of |a_i - b_i| over the 4 bytes)
    nanosleep.u32 t, membar.{cta,gl,sys}, fence.{sc,acq_rel}.{cta,gpu,sys}, trap
    ""  (an empty template: a compiler barrier, nothing to do on the emulator)

    python -m cuset.evaluate.cpu.ptx 'add.rm.f32 %0, %1, %2;'     # prints the C++ for r, a, b
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass

# Special registers read through the emulator's own helpers, never through a CUDA-style name a
# program may define itself by this very asm (cudaGraphsPerfScaling's __globaltimer()).
_SPECIAL = {
    "%globaltimer": "::cuset::globaltimer()",
    "%globaltimer_lo": "((unsigned)::cuset::globaltimer())",
    "%globaltimer_hi": "((unsigned)(::cuset::globaltimer() >> 32))",
    "%clock": "((unsigned)::clock64())",
    "%clock64": "((unsigned long long)::clock64())",
    "%laneid": "::cuset_ptx_laneid()",
    "%warpid": "::cuset_ptx_warpid()",
    "%smid": "::cuset_ptx_smid()",
    "%nsmid": "::cuset_ptx_nsmid()",
    "%lanemask_lt": "::cuset_ptx_lanemask_lt()",
}
_ROUND = {"rn": "rn", "rz": "rz", "rm": "rd", "rp": "ru"}  # PTX modifier -> CUDA intrinsic suffix
# (opcode, type) -> intrinsic name without the rounding suffix, and its operand count
_ARITH = {
    ("add", "f32"): ("__fadd_", 2), ("sub", "f32"): ("__fsub_", 2), ("mul", "f32"): ("__fmul_", 2),
    ("div", "f32"): ("__fdiv_", 2), ("fma", "f32"): ("__fmaf_", 3), ("sqrt", "f32"): ("__fsqrt_", 1),
    ("rcp", "f32"): ("__frcp_", 1),
    ("add", "f64"): ("__dadd_", 2), ("sub", "f64"): ("__dsub_", 2), ("mul", "f64"): ("__dmul_", 2),
    ("div", "f64"): ("__ddiv_", 2), ("fma", "f64"): ("__fma_", 3), ("sqrt", "f64"): ("__dsqrt_", 1),
    ("rcp", "f64"): ("__drcp_", 1),
}
_DEFAULT_NEAREST = {"add", "sub", "mul"}  # PTX: these round to nearest without a modifier
_MOV_TYPES = {"b32", "b64", "u32", "u64", "s32", "s64"}


class PtxUnsupported(ValueError):
    """An asm statement outside the subset; the message names the instruction."""


@dataclass
class Operand:
    constraint: str  # "=r", "+f", "l", ...
    expr: str  # the C++ expression inside the parentheses


def _operand(token: str, operands: list[Operand], instr: str) -> str:
    token = token.strip()
    m = re.fullmatch(r"%(\d+)", token)
    if m:
        k = int(m.group(1))
        if k >= len(operands):
            raise PtxUnsupported(f"inline PTX: operand %{k} of '{instr}' is not given")
        return f"({operands[k].expr})"
    if token in _SPECIAL:
        return _SPECIAL[token]
    if re.fullmatch(r"-?(0[xX][0-9a-fA-F]+|\d+)[uU]?", token):
        return token
    raise PtxUnsupported(f"inline PTX: operand '{token}' of '{instr}'")


def _destination(token: str, operands: list[Operand], outputs: int, instr: str) -> str:
    m = re.fullmatch(r"%(\d+)", token.strip())
    if not m or int(m.group(1)) >= outputs:
        raise PtxUnsupported(f"inline PTX: destination '{token.strip()}' of '{instr}' is not an output operand")
    return f"({operands[int(m.group(1))].expr})"


def _instruction(instr: str, operands: list[Operand], outputs: int) -> str:
    parts = instr.split(None, 1)
    opcode = parts[0]
    args = [a.strip() for a in parts[1].split(",")] if len(parts) > 1 else []
    pieces = opcode.split(".")
    op, mods = pieces[0], pieces[1:]
    if op == "mov" and len(mods) == 1 and mods[0] in _MOV_TYPES and len(args) == 2:
        return f"{_destination(args[0], operands, outputs, instr)} = {_operand(args[1], operands, instr)}"
    if op in ("add", "sub", "mul", "div", "fma", "sqrt", "rcp") and mods and (op, mods[-1]) in _ARITH:
        name, arity = _ARITH[(op, mods[-1])]
        rounding = mods[:-1]
        if not rounding and op in _DEFAULT_NEAREST:
            rounding = ["rn"]
        if len(rounding) != 1 or rounding[0] not in _ROUND or len(args) != arity + 1:
            raise PtxUnsupported(f"inline PTX: instruction '{opcode}'")
        srcs = ", ".join(_operand(a, operands, instr) for a in args[1:])
        return f"{_destination(args[0], operands, outputs, instr)} = ::{name}{_ROUND[rounding[0]]}({srcs})"
    if opcode == "vabsdiff4.u32.u32.u32.add" and len(args) == 4:
        srcs = ", ".join(_operand(a, operands, instr) for a in args[1:])
        return f"{_destination(args[0], operands, outputs, instr)} = ::cuset_ptx_vabsdiff4_add({srcs})"
    if opcode == "nanosleep.u32" and len(args) == 1:
        return f"::__nanosleep({_operand(args[0], operands, instr)})"
    if op in ("membar", "fence") and not args and len(mods) in (1, 2):
        return "::__threadfence()"
    if opcode == "trap" and not args:
        return "::__trap()"
    raise PtxUnsupported(f"inline PTX: instruction '{opcode}'")


def translate_asm(template: str, outputs: list[Operand], inputs: list[Operand]) -> str:
    """The C++ expression for one asm statement (template already unescaped: its string
    literals joined). Raises PtxUnsupported naming the first instruction outside the subset."""
    operands = outputs + inputs
    if re.search(r"%\[|[{}]|\.reg\b|@", template):
        raise PtxUnsupported(f"inline PTX: '{template.strip()[:40]}' (braces, .reg declarations, predicates or named operands)")
    exprs = [_instruction(i.strip(), operands, len(outputs)) for i in template.split(";") if i.strip()]
    return "(void)(" + ", ".join(exprs) + ")" if exprs else "((void)0)"


def unescape(literal: str) -> str:
    """The characters of a C string literal's contents (the escapes PTX templates use)."""
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), literal)


def main(argv: list[str] | None = None) -> int:
    args = argv if argv is not None else sys.argv[1:]
    if len(args) != 1:
        print("usage: python -m cuset.evaluate.cpu.ptx 'PTX TEMPLATE'", file=sys.stderr)
        return 2
    n = len(set(re.findall(r"%(\d+)", args[0])))
    ops = [Operand("=r" if k == 0 else "r", f"x{k}") for k in range(max(n, 1))]
    try:
        print(translate_asm(args[0], ops[:1], ops[1:]))
    except PtxUnsupported as e:
        print(e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
