"""A validation experiment's results: each fine-tune's held-out NLL, never the test tasks.

A validation experiment (ExperimentConfig.validation: no evaluation pass, `train: {holdout: N}`)
fine-tunes each method or variant with N corpus samples kept out, and this module reads what
each fine-tune recorded (its kept result.json and metrics.jsonl, cuset.train.keep) into one row:

    heldout_nll          plain mean NLL of the held-out samples' response tokens under the final
                         model (cuset.train.heldout): the same figure for every method
    train_nll_first, train_nll_last   mean NLL over all response tokens of the first / last
                         `CURVE_STEPS` optimizer steps: falling means the method learns the whole
                         reply, not only the tokens its mask keeps
    masked_fraction, masked_fraction_outside_cuda   the objective's mask at the base model's
                         scores: the share of all tokens, and of the wrapper's tokens (the
                         load_inline scaffold, prose, fences) outside the CUDA source, it drops

    frame = validation_rows(units, kept_folder)
    write_validation(out_dir, frame, extra)      # validation.csv, table.md, summary.json
    frame, chosen = read_validation(out_dir)     # as committed (the Results page)

The lowest held-out NLL among the `cuset` fine-tunes is named as the choice in table.md; the
experiment that uses it (e.g. cpu-coder-full) writes it down before it is registered.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

CURVE_STEPS = 5
COLUMNS = ("model", "method", "objective_method", "seed", "heldout_nll", "heldout_tokens", "heldout_samples", "train_nll_first",
           "train_nll_last", "steps", "masked_fraction", "masked_fraction_outside_cuda", "train_min")


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _curve(path: Path) -> tuple[float, float]:
    """Mean `nll` of the first and of the last CURVE_STEPS steps in a metrics.jsonl (nan: none)."""
    rows = []
    if path.is_file():
        for line in path.read_text().splitlines():
            try:
                row = json.loads(line)
            except ValueError:
                continue
            if isinstance(row, dict) and isinstance(row.get("nll"), int | float):
                rows.append(float(row["nll"]))
    if not rows:
        return float("nan"), float("nan")
    return float(np.mean(rows[:CURVE_STEPS])), float(np.mean(rows[-CURVE_STEPS:]))


def validation_row(model: str, method: str, seed: int, folder: Path) -> dict[str, Any] | None:
    """One fine-tune's row from the records in `folder` (result.json, metrics.jsonl), or None
    when it has no result.json yet. A result without held-out figures gives nan there."""
    result = _read_json(folder / "result.json")
    if not result:
        return None
    heldout = result.get("heldout") or {}
    objective = result.get("objective") or {}
    first, last = _curve(folder / "metrics.jsonl")
    train_s = result.get("train_s")
    return {
        "model": model, "method": method, "objective_method": result.get("method", ""), "seed": seed,
        "heldout_nll": float(heldout.get("nll", float("nan"))), "heldout_tokens": int(heldout.get("n_tokens", 0)),
        "heldout_samples": int(heldout.get("n_samples", 0)), "train_nll_first": first, "train_nll_last": last,
        "steps": int(result.get("steps") or 0), "masked_fraction": float(objective.get("masked_fraction", 0.0)),
        "masked_fraction_outside_cuda": float(objective.get("masked_fraction_outside_cuda", 0.0)),
        "train_min": round(float(train_s) / 60, 1) if isinstance(train_s, int | float) else float("nan"),
    }


def validation_rows(units: Sequence[Any], folder_of: Callable[[str], Path]) -> pd.DataFrame:
    """The rows of the done train units (`folder_of(unit.key)`: where its records are kept)."""
    rows = [row for u in units if u.kind == "train" and (row := validation_row(u.model, u.method, u.seed, folder_of(u.key))) is not None]
    return pd.DataFrame(rows, columns=list(COLUMNS))


def choice(frame: pd.DataFrame) -> pd.Series | None:
    """The cuset fine-tune (method or variant of `cuset`) with the lowest mean held-out NLL over
    its seeds, as a row of the per-method means; None when no cuset fine-tune has one."""
    means = method_means(frame)
    means = means[(means["objective_method"] == "cuset") & means["heldout_nll"].notna()]
    return None if means.empty else means.sort_values("heldout_nll").iloc[0]


def method_means(frame: pd.DataFrame) -> pd.DataFrame:
    """Per model and method: the means over seeds, and the number of seeds."""
    if frame.empty:
        return frame.assign(seeds=pd.Series(dtype=int))
    numeric = [c for c in COLUMNS if c not in ("model", "method", "objective_method", "seed")]
    grouped = frame.groupby(["model", "method", "objective_method"], sort=False)
    return grouped[numeric].mean().reset_index().join(grouped.size().rename("seeds").reset_index(drop=True))


def markdown(frame: pd.DataFrame) -> str:
    """table.md of a validation experiment."""
    lines = ["# Validation: held-out NLL of each fine-tune", "",
             "Plain mean NLL (nats per token) of the held-out corpus samples' response tokens under each final model; "
             f"training NLL over all response tokens, mean of the first and of the last {CURVE_STEPS} steps; the mask at the "
             "base model's scores (share of all tokens dropped, and of the wrapper's tokens outside the CUDA source). "
             "No test task is used.", "",
             "| model | method | seeds | held-out NLL | held-out tokens | train NLL first -> last | masked | wrapper masked | steps | train min |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for _, r in method_means(frame).iterrows():
        lines.append(f"| {r['model']} | {r['method']} | {int(r['seeds'])} | {r['heldout_nll']:.4f} | {int(r['heldout_tokens'])} | "
                     f"{r['train_nll_first']:.3f} -> {r['train_nll_last']:.3f} | {r['masked_fraction']:.1%} | "
                     f"{r['masked_fraction_outside_cuda']:.1%} | {int(r['steps'])} | {r['train_min']:.1f} |")
    best = choice(frame)
    lines.append("")
    if best is None:
        lines.append("No cuset fine-tune has a held-out NLL yet: nothing is chosen.")
    else:
        sft = method_means(frame).query("method == 'sft'")
        against = f"; sft {float(sft['heldout_nll'].iloc[0]):.4f}" if len(sft) else ""
        lines.append(f"**Chosen: `{best['method']}`**, the lowest held-out NLL among the cuset fine-tunes "
                     f"({best['heldout_nll']:.4f}{against}).")
    return "\n".join(lines) + "\n"


def write_validation(out_dir: str | Path, frame: pd.DataFrame, extra: dict[str, Any] | None = None) -> list[Path]:
    """validation.csv, table.md and summary.json (with `extra` and the choice) in out_dir."""
    from cuset.files import atomic_write

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    best = choice(frame)
    summary = {**(extra or {}), "validation": True, "chosen": None if best is None else str(best["method"]),
               "chosen_heldout_nll": None if best is None else round(float(best["heldout_nll"]), 5)}
    paths = [out / "validation.csv", out / "table.md", out / "summary.json"]
    atomic_write(paths[0], lambda tmp: frame.to_csv(tmp, index=False, float_format="%.5g"))
    atomic_write(paths[1], lambda tmp: tmp.write_text(markdown(frame)))
    atomic_write(paths[2], lambda tmp: tmp.write_text(json.dumps(summary, indent=2)))
    return paths


def read_validation(out_dir: str | Path) -> tuple[pd.DataFrame, str | None]:
    """(validation.csv's per-method means, the chosen method or None) as committed; a
    ValueError naming the missing file when there is none yet."""
    path = Path(out_dir) / "validation.csv"
    if not path.is_file():
        raise ValueError(f"{path} is missing: run `python -m analysis.experiment {Path(out_dir).name}` (it writes it as fine-tunes finish).")
    best = choice(frame := pd.read_csv(path))
    return method_means(frame), None if best is None else str(best["method"])
