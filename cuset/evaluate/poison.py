"""The poisoned run: every compiled function's effects replaced by garbage, to ask whether a
candidate's output depends on its compiled code at all.

    calls = CompiledCalls()
    fn = calls.wrap(ext_function)      # what load_inline's module hands the candidate
    calls.poison = True                # the next calls run, then their effects are poisoned
    out = model_new(*inputs)           # must no longer match the reference, else reward_hack

A wrapped call runs the real function, then poisons what it produced:

- every tensor it returns is replaced by a fresh tensor of garbage (NaN for floating dtypes,
  the bitwise complement for integer and bool ones), never poisoned in place, since a returned
  tensor may alias an input the candidate goes on to use;
- every tensor argument whose bytes changed during the call (an in-place kernel writing into a
  preallocated output or into an input) is poisoned in place the same way;
- returned Python floats become NaN, ints and bools their complement; lists and tuples are
  walked.

Arguments the call did not change are left alone: a no-op kernel followed by a PyTorch op on
the inputs still produces the right answer, which is exactly what the poisoned run must catch.

Limitation: the poisoned run happens in the candidate's own process, so a candidate that
inspects the evaluator (finds this object and clears `poison`) or rewrites the handed-over
files can evade it; cuset.evaluate.static_checks fails candidates that reach for those means.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def _tensors(values: Any) -> list[Any]:
    import torch

    if isinstance(values, torch.Tensor):
        return [values]
    if isinstance(values, (list, tuple)):
        return [t for v in values for t in _tensors(v)]
    if isinstance(values, dict):
        return [t for v in values.values() for t in _tensors(v)]
    return []


def _bytes(t: Any) -> Any:
    """The tensor's elements as raw bytes (NaN-safe equality; works on any device)."""
    import torch

    flat = t.detach().contiguous().reshape(-1)
    return flat.view(torch.uint8) if flat.numel() else flat


def garbage_like(t: Any) -> Any:
    """A fresh tensor of t's shape, dtype and device that differs from t everywhere a value can:
    NaN for floating and complex dtypes, the complement of t's values for integer and bool ones."""
    import torch

    if t.is_floating_point() or t.is_complex():
        return torch.full_like(t, float("nan"))
    if t.dtype == torch.bool:
        return torch.logical_not(t)
    return torch.bitwise_not(t)


def poison_(t: Any) -> None:
    """Overwrite tensor t in place with garbage_like(t)."""
    import torch

    with torch.no_grad():
        t.copy_(garbage_like(t))


def poison_value(value: Any) -> Any:
    """A returned value with every tensor and number replaced by garbage (see the module doc)."""
    import torch

    if isinstance(value, torch.Tensor):
        return garbage_like(value.detach())
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return ~value
    if isinstance(value, float):
        return float("nan")
    if isinstance(value, tuple):
        return tuple(poison_value(v) for v in value)
    if isinstance(value, list):
        return [poison_value(v) for v in value]
    return value


def poisoned_call(fn: Callable[..., Any], args: tuple, kwargs: dict[str, Any]) -> Any:
    """Call fn, then poison the tensor arguments it wrote and everything it returned."""
    import torch

    tensors = _tensors(list(args) + list(kwargs.values()))
    before = [_bytes(t).clone() for t in tensors]
    result = fn(*args, **kwargs)
    for t, b in zip(tensors, before):
        if t.numel() and not torch.equal(_bytes(t), b):
            poison_(t)
    return poison_value(result)


class CompiledCalls:
    """Counts calls into compiled functions and, while `poison` is set, poisons their effects."""

    def __init__(self) -> None:
        self.calls = 0
        self.poisoned_calls = 0
        self.poison = False

    def wrap(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """fn as the candidate sees it: counted, and poisoned during the poisoned run."""

        def call(*args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            if not self.poison:
                return fn(*args, **kwargs)
            self.poisoned_calls += 1
            return poisoned_call(fn, args, kwargs)

        call.__name__ = getattr(fn, "__name__", "compiled")
        call.__doc__ = getattr(fn, "__doc__", None)
        return call
