"""The paper's two findings about CUDA sensitivity, measured on a scored data set.

(a) "Most CUDA-sensitive tokens are predicted with high confidence": the share of tokens with
    p >= 0.5 (and >= 0.9) among CUDA-sensitive tokens against the other tokens, per category.
(b) "A smaller low-confidence subset forms regions": made testable as a permutation test. The
    observed statistic is the share of low-confidence sensitive tokens that fall in regions of
    two or more tokens (cuset.regions, the objective's threshold and clustering). The null
    keeps, per sample, the number of low-confidence sensitive tokens but places them at random
    among that sample's sensitive tokens, and reclusters with the same parameters; repeated R
    times. p-value = (1 + #{baseline >= observed}) / (R + 1) (one-sided: clustering beyond
    chance). Drawing among the *sensitive* tokens, not all tokens, matters: sensitive tokens
    already sit in spans, so the baseline gets that adjacency for free and only clustering of
    the low-confidence ones beyond it counts.

    cuset stats bundled --model coder-0.5b          # both, as a table (or --json)
    python -m analysis.findings                     # all embedded models -> analysis/results/findings/
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from cuset.confidence import TokenTable, category_stats
from cuset.objective import ObjectiveConfig, low_confidence
from cuset.regions import REGION_KINDS, find_regions

HIGH_THRESHOLDS = (0.5, 0.9)
# Where `python -m analysis.findings` writes (committed): the table of analysis/results/findings/README.md, the Models page
# and the findings figure read it.
DEFAULT_RESULTS = Path(__file__).resolve().parents[1] / "analysis" / "results" / "findings"


def confidence_shares(table: TokenTable, thresholds: tuple[float, ...] = HIGH_THRESHOLDS) -> list[dict[str, Any]]:
    """Finding (a): one row per category (plus 'any sensitive' and 'not sensitive') with token
    count, mean and median p, and `share_ge_T` for each threshold T."""
    rows = category_stats(table, thresholds[0])
    for row in rows:
        row[f"share_ge_{thresholds[0]:g}"] = row.pop("high_confidence_share")
    for threshold in thresholds[1:]:
        for row, other in zip(rows, category_stats(table, threshold)):
            row[f"share_ge_{threshold:g}"] = other["high_confidence_share"]
    return rows


def _clustered_share(table: TokenTable, candidate: np.ndarray, config: ObjectiveConfig) -> tuple[float, Any]:
    regions = find_regions(candidate, table.sample, table.pos, table.p, table.bits, table.stmt, table.stmt_kind,
                           table.starts, table.ends, config.regions)
    # Over every candidate: regions dropped by min_size and DBSCAN's noise are the unclustered ones.
    total = int(candidate.sum())
    return (float(regions.size[regions.size >= 2].sum()) / total if total else float("nan")), regions


def random_candidates(table: TokenTable, n_per_sample: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """bool [N]: for each sample s, `n_per_sample[s]` of its sensitive tokens chosen uniformly
    without replacement (vectorised: random keys, sorted within each sample, the smallest n)."""
    where = np.flatnonzero(table.sensitive)
    sample = table.sample[where]
    order = np.lexsort((rng.random(where.shape[0]), sample))
    sorted_sample = sample[order]
    first = np.searchsorted(sorted_sample, sorted_sample, side="left")
    rank = np.arange(where.shape[0]) - first
    chosen = np.zeros(table.p.shape[0], dtype=bool)
    chosen[where[order[rank < n_per_sample[sorted_sample]]]] = True
    return chosen


@dataclass
class ClusteringTest:
    """Finding (b) for one scored data set."""

    low_sensitive_tokens: int
    regions: int
    observed_share: float  # share of low-confidence sensitive tokens in regions of >= 2 tokens
    baseline_mean: float
    baseline_sd: float
    baseline_q95: float
    p_value: float
    permutations: int
    regions_by_kind: dict[str, int]
    baseline: np.ndarray  # [R] the permuted shares

    def to_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in self.__dict__.items() if k != "baseline"}
        return out | {"baseline_shares": [round(float(x), 5) for x in self.baseline]}


def clustering_test(table: TokenTable, config: ObjectiveConfig | None = None, permutations: int = 200, seed: int = 0) -> ClusteringTest:
    """Finding (b): observed share of low-confidence sensitive tokens in multi-token regions
    against the permutation baseline described in the module docstring."""
    config = config or ObjectiveConfig()
    candidate = low_confidence(table, config) & table.sensitive
    observed, regions = _clustered_share(table, candidate, config)
    n_per_sample = np.bincount(table.sample[candidate], minlength=table.n_samples)
    rng = np.random.default_rng(seed)
    # Nothing to place (no low-confidence sensitive token): no test, and no p-value that says otherwise.
    runs = permutations if candidate.any() else 0
    baseline = np.array([_clustered_share(table, random_candidates(table, n_per_sample, rng), config)[0] for _ in range(runs)])
    kinds = np.bincount(regions.kind, minlength=len(REGION_KINDS)) if len(regions) else np.zeros(len(REGION_KINDS), dtype=int)
    return ClusteringTest(
        low_sensitive_tokens=int(candidate.sum()),
        regions=len(regions),
        observed_share=observed,
        baseline_mean=float(np.mean(baseline)) if runs else float("nan"),
        baseline_sd=float(np.std(baseline)) if runs else float("nan"),
        baseline_q95=float(np.quantile(baseline, 0.95)) if runs else float("nan"),
        p_value=float((1 + np.sum(baseline >= observed)) / (runs + 1)) if runs else float("nan"),
        permutations=runs,
        regions_by_kind={kind: int(n) for kind, n in zip(REGION_KINDS, kinds) if n},
        baseline=baseline,
    )


def findings(table: TokenTable, config: ObjectiveConfig | None = None, permutations: int = 200, seed: int = 0) -> dict[str, Any]:
    """Both findings as one JSON-ready dict: `confidence` (rows of finding a) and
    `clustering` (finding b)."""
    return {
        "confidence": confidence_shares(table),
        "clustering": clustering_test(table, config, permutations, seed).to_dict(),
        "objective": (config or ObjectiveConfig()).to_dict(),
    }


def format_findings(result: dict[str, Any]) -> list[str]:
    """Readable lines for the CLI."""
    keys = [k for k in result["confidence"][0] if k.startswith("share_ge_")]
    lines = [f"(a) {'category':<16} {'tokens':>8} {'mean p':>7} " + " ".join(f"{'p>=' + k[9:]:>7}" for k in keys)]
    lines += [f"    {r['category']:<16} {r['tokens']:>8} {r['mean_p']:>7.3f} " + " ".join(f"{r[k]:>7.1%}" for k in keys)
              for r in result["confidence"]]
    c = result["clustering"]
    lines += [
        f"(b) {c['low_sensitive_tokens']} low-confidence sensitive tokens in {c['regions']} regions; "
        f"in regions of >= 2 tokens: observed {c['observed_share']:.1%}, permutation baseline "
        f"{c['baseline_mean']:.1%} +- {c['baseline_sd']:.1%} (95th pct {c['baseline_q95']:.1%}), "
        f"p = {c['p_value']:.4f} ({c['permutations']} permutations)",
        "    regions by kind: " + ", ".join(f"{k} {n}" for k, n in sorted(c["regions_by_kind"].items(), key=lambda kv: -kv[1])),
    ]
    return lines


def measure_models(models: list[str], data: str = "bundled", every: dict[str, int] | None = None, permutations: int = 200,
                   config: ObjectiveConfig | None = None, progress: Any = None) -> dict[str, Any]:
    """Both findings for each model on one data set: {"data", "models": [{model, title, samples,
    tokens, dtype, fingerprint, every, confidence, clustering}, ...]}. `every[model] = k` keeps
    every k-th sample for that model (a stated subset for slow models); scores come from the
    caches (workspace, then shipped) and are computed where missing. `progress(model, done,
    total)` follows the scoring."""
    from cuset.confidence import ScoreConfig, score_dataset
    from cuset.data import load
    from cuset.models import display_name

    every = every or {}
    samples = load(data)
    out = []
    for name in models:
        step = max(1, int(every.get(name, 1)))
        subset = samples[::step]
        score_config = ScoreConfig(model=name)
        scored = score_dataset(subset, score_config, (lambda d, t, n=name: progress(n, d, t)) if progress else None,
                               dataset_name=data if step == 1 else f"{data}[::{step}]")
        result = findings(scored.table, config, permutations)
        out.append({"model": name, "title": display_name(name), "samples": len(subset), "of_samples": len(samples), "every": step,
                    "tokens": scored.stats["n_tokens"], "dtype": score_config.dtype, "fingerprint": scored.stats["model_fingerprint"],
                    "confidence": result["confidence"], "clustering": result["clustering"]})
    return {"data": data, "objective": (config or ObjectiveConfig()).to_dict(), "permutations": permutations, "models": out}


def write_results(result: dict[str, Any], out_dir: Any) -> list[Any]:
    """findings.json (everything), by_category.csv (finding a) and clustering.csv (finding b)
    into `out_dir`, each written to a temporary name and renamed."""
    import json

    import pandas as pd

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    category = pd.DataFrame([{"model": m["model"], "samples": m["samples"], **row} for m in result["models"] for row in m["confidence"]])
    clustering = pd.DataFrame([{"model": m["model"], "samples": m["samples"], "tokens": m["tokens"],
                                **{k: v for k, v in m["clustering"].items() if k not in ("baseline_shares", "regions_by_kind")},
                                "regions_by_kind": json.dumps(m["clustering"]["regions_by_kind"])} for m in result["models"]])
    written = []
    for name, text in (("findings.json", json.dumps(result, indent=1, default=float)),
                       ("by_category.csv", category.to_csv(index=False, float_format="%.5g")),
                       ("clustering.csv", clustering.to_csv(index=False, float_format="%.5g"))):
        tmp = out / f".{name}.tmp"
        tmp.write_text(text)
        tmp.replace(out / name)
        written.append(out / name)
    return written


def read_results(path: Any) -> dict[str, Any]:
    """The findings.json written by write_results (a folder or the file itself)."""
    import json

    path = Path(path)
    return json.loads((path / "findings.json" if path.is_dir() else path).read_text())


def model_frames(result: dict[str, Any]) -> dict[str, Any]:
    """Tables of a findings result for side-by-side display (the Models page, analysis/results/findings/README.md):
    `summary` (one row per model: samples, tokens, both findings' headline numbers, whether
    finding (a) holds), `categories` (p >= 0.5 share per category x model) and `kinds`
    (regions per kind x model), with the library's category labels and short model names."""
    import pandas as pd

    from cuset.report import category_label

    summary, categories, kinds = [], {}, {}
    for m in result["models"]:
        groups = {r["category"]: r for r in m["confidence"]}
        sens, other, c = groups["any sensitive"], groups["not sensitive"], m["clustering"]
        summary.append({
            "model": m["title"], "samples": f"{m['samples']} / {m['of_samples']}", "tokens": m["tokens"], "dtype": m["dtype"],
            "sensitive p≥0.5": sens["share_ge_0.5"], "other p≥0.5": other["share_ge_0.5"],
            "sensitive p≥0.9": sens["share_ge_0.9"], "other p≥0.9": other["share_ge_0.9"],
            "(a) holds": sens["share_ge_0.5"] > 0.5 and sens["share_ge_0.5"] >= other["share_ge_0.5"],
            "in regions ≥2 (observed)": c["observed_share"], "permutation mean": c["baseline_mean"], "p-value": c["p_value"],
        })
        short = m["title"].removesuffix("-Instruct")
        categories[short] = {category_label(r["category"]): r["share_ge_0.5"] for r in m["confidence"]}
        kinds[short] = c["regions_by_kind"]
    return {"summary": pd.DataFrame(summary), "categories": pd.DataFrame(categories), "kinds": pd.DataFrame(kinds).fillna(0).astype(int)}
