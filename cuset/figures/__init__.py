"""Paper figures: static PDF, SVG and PNG files drawn from the stored results (matplotlib, Agg).

    python -m analysis.figures --out figures/ --formats pdf,png     # the one command
    from cuset.figures import make_all
    files = make_all("figures", model="default")    # [FigureFile, ...] + figures/manifest.json

The figures, each drawn by a `*_figure` function from the data it shows, which a data-preparation
function computes (those are what the tests check against hand computations, not pixels):

    confidence        p(gold) of CUDA-sensitive vs other tokens, and per category   confidence_histogram, category_stats
    region_examples   one low-confidence sensitive region per frequent kind, in code region_examples
    threshold_sweep   masked fraction and effective sample size over the quantiles   threshold_sweep
    training_curves   per-step NLL (all, sensitive, other tokens) per fine-tune      curve_table
    correctness       correct rate by method and level / split, 95% Wilson bars      correctness_table
    experiments       pass@1 per method with intervals, method - sft paired by task   analysis/results/NAME/*.csv
                      (cuset.figures.experiment; also experiments_table.md, the table of each results README)
    confidence_diff   newest fine-tune - its base, per category; regions vs masked   cuset.figures.analysis, cuset.diff
    failures_in_regions  located failures inside regions vs chance, per status       cuset.figures.analysis, cuset.failures

`make_all` gathers the data from the workspace (token scores from the cache, scoring what is
missing; the training jobs' metrics; the completed evaluation runs), writes every figure in
every format (each file to a temporary name, then renamed: a reader never sees half a file)
and a manifest.json (name, title, caption, files, a summary of the data, generated time). A
figure whose data is missing (no evaluation run yet, no fine-tune) is skipped with the reason
in the returned list and the manifest; it is not an error. The Figures page regenerates them
as a background job (`cuset.figures.job`); `cuset.figures.draw` holds the drawing side.

Why matplotlib and not plotly + kaleido (the app's interactive figures, cuset/report.py):
kaleido does drive Debian's /usr/bin/chromium without downloading anything, but it needs a
headless browser wherever figures are made (GPU servers and Ray nodes rarely have one), costs a
browser start (~3 s here) and ~0.25 s per file, while matplotlib writes vector PDF/SVG in-process
in milliseconds with TrueType fonts embedded (pdf.fonttype 42, what publishers ask for).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar

import pandas as pd

from cuset.confidence import category_stats
from cuset.config import ConfigFile
from cuset.figures.draw import (
    FORMATS,
    check_formats,
    confidence_figure,
    confidence_histogram,
    correctness_figure,
    correctness_table,
    curve_table,
    region_examples,
    region_examples_figure,
    save_figure,
    threshold_sweep,
    threshold_sweep_figure,
    training_curves_figure,
)
from cuset.files import atomic_write
from cuset.objective import ObjectiveConfig, compute
from cuset.palette import method_sort_key

HARNESS_CHECKS = ("reference", "wrong")  # evaluation runs of the suite's own solutions, not methods
Progress = Callable[[str, int, int], None]


class Skip(Exception):
    """A figure's data is missing; the message says what is missing and how to get it."""


@dataclass
class FigureFile:
    """One figure of a make_all run: `files` maps format -> path (empty when skipped, and
    `skipped` says why); `source` summarises the data it was drawn from."""

    name: str
    title: str
    caption: str = ""
    files: dict[str, str] = field(default_factory=dict)
    source: dict[str, Any] = field(default_factory=dict)
    skipped: str = ""

    @property
    def made(self) -> bool:
        return not self.skipped


@dataclass
class FiguresConfig(ConfigFile):
    """Which data the paper figures are drawn from, and where they go (also the figures job's config)."""

    KIND: ClassVar[str] = "figures config"
    JOB_KIND: ClassVar[str] = "figures"

    out_dir: str = field(default="", metadata={"help": "Folder of the figures and manifest.json ('' = <workspace>/figures)."})
    formats: list[str] = field(default_factory=lambda: list(FORMATS), metadata={"help": f"File formats, from {FORMATS}."})
    model: str = field(default="", metadata={"help": "Model whose token scores are shown ('' = $CUSET_MODEL or default)."})
    data: str = field(default="bundled", metadata={"help": "Data set of the confidence, region and sweep figures (cuset.data.load)."})
    limit: int = field(default=0, metadata={"help": "Use the first N samples (0 = all): for quick looks and tests."})
    objective: str = field(default="", metadata={"help": "Saved objective config for regions and the sweep ('' = defaults)."})

    def __post_init__(self) -> None:
        self.formats = list(check_formats(self.formats))
        if self.limit < 0:
            raise ValueError(f"limit={self.limit}: use 0 (all samples) or a positive count.")

    @property
    def method(self) -> str:
        return "figures"

    @property
    def preset(self) -> str:
        return ",".join(self.formats)

    @property
    def nproc(self) -> int:
        return 1

    def resolved(self) -> FiguresConfig:
        """Model and output folder filled in, so the job draws what the submitter saw."""
        from cuset.models import model_name

        return replace(self, model=model_name(self.model or None), out_dir=str(Path(self.out_dir or default_dir()).resolve()))


def default_dir() -> Path:
    from cuset.workspace import workspace_dir

    return workspace_dir() / "figures"


class Inputs:
    """What make_all reads from the workspace, each part gathered once on first use (and a
    failure remembered, so three figures over the same scores do not retry the model)."""

    def __init__(self, config: FiguresConfig, progress: Progress | None = None) -> None:
        self.config = config
        self.progress = progress
        self._cache: dict[str, Any] = {}

    def _once(self, key: str, build: Callable[[], Any]) -> Any:
        if key not in self._cache:
            try:
                self._cache[key] = build()
            except Skip as exc:
                self._cache[key] = exc
        value = self._cache[key]
        if isinstance(value, Skip):
            raise value
        return value

    def scored(self) -> Any:
        return self._once("scored", self._score)

    def _score(self) -> Any:
        from cuset.confidence import ScoreConfig, record_run, score_samples, scored_from_cache
        from cuset.data import load
        from cuset.models import ModelError

        samples = load(self.config.data)
        samples = samples[: self.config.limit] if self.config.limit else samples
        score_config = ScoreConfig(model=self.config.model)
        try:
            scored, indices = scored_from_cache(samples, score_config)
            have = set(indices)
            missing = [s for i, s in enumerate(samples) if i not in have]
            if missing:
                report = (lambda done, total: self.progress("scoring", done, total)) if self.progress else None
                _, stats = score_samples(missing, score_config, report)
                record_run(missing, stats, self.config.data)
                scored, _ = scored_from_cache(samples, score_config)
        except ModelError as exc:
            raise Skip(f"the token scores need model {self.config.model!r}: {exc}") from None
        if not scored.samples:
            raise Skip(f"data set {self.config.data!r} has no samples")
        scored.stats["scored_now"] = len(missing)
        return scored

    def objective(self) -> ObjectiveConfig:
        from cuset.objective import load_named

        return load_named(self.config.objective) if self.config.objective else ObjectiveConfig()

    def objective_result(self) -> Any:
        return self._once("objective", lambda: compute(self.scored().table, self.objective()))

    def scores_source(self) -> dict[str, Any]:
        stats = self.scored().stats
        return {"data": self.config.data, "model": stats["model"], "samples": stats["n_samples"], "tokens": stats["n_tokens"],
                "truncated": stats["n_truncated"], "scored_now": stats["scored_now"]}

    def training_runs(self) -> tuple[dict[str, tuple[str, list[dict[str, Any]]]], list[dict[str, Any]]]:
        from cuset import jobs

        runs, source = {}, []
        for job in sorted((j for j in jobs.list_jobs(limit=1000) if j.kind == "train"), key=lambda j: j.id):
            rows = jobs.read_job_metrics(job.id)
            if rows:
                suffix = "" if job.status == "completed" else f", {job.status}"
                runs[f"{job.method} (job {job.id}{suffix})"] = (job.method, rows)
                source.append({"job": job.id, "method": job.method, "preset": job.preset, "status": job.status, "steps": len(rows)})
        return runs, source

    def eval_frame(self) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
        from cuset.evaluate.results import ResultStore

        store = ResultStore()
        runs = store.runs(limit=10_000)
        if runs.empty:
            return pd.DataFrame(), []
        runs = runs[(runs["status"] == "completed") & ~runs["method"].isin(HARNESS_CHECKS)]
        if runs.empty:
            return pd.DataFrame(), []
        source = [{"run": int(r.id), "label": r.label, "method": r.method, "backend": r.backend, "suite": r.suite,
                   "candidates": int(r.candidates)} for r in runs.itertuples()]
        return store.frame([int(i) for i in runs["id"]]), source


def _model_text(name: str) -> str:
    from cuset.models import display_name

    return display_name(name)


def _confidence(inputs: Inputs) -> tuple[Any, str, dict[str, Any]]:
    scored = inputs.scored()
    stats = {r["category"]: r for r in category_stats(scored.table)}
    caption = (
        f"Confidence of CUDA-sensitive vs other tokens under {_model_text(scored.stats['model'])} on the {inputs.config.data} "
        f"data ({scored.stats['n_samples']} samples, {scored.stats['n_tokens']:,} response tokens). (a) Distribution of the "
        "gold token's probability in each group (each sums to 100%). (b) Share of tokens with p ≥ 0.5 per sensitivity "
        f"category: {stats['any sensitive']['high_confidence_share']:.0%} of sensitive and "
        f"{stats['not sensitive']['high_confidence_share']:.0%} of other tokens."
    )
    return confidence_figure(scored.table), caption, inputs.scores_source()


def _regions(inputs: Inputs) -> tuple[Any, str, dict[str, Any]]:
    from cuset.regions import region_rows

    scored, result, config = inputs.scored(), inputs.objective_result(), inputs.objective()
    if not len(result.regions):
        raise Skip("no low-confidence sensitive regions under this threshold")
    ids = [s.id for s in scored.samples]
    rows = region_rows(result.regions, [s.response for s in scored.samples], ids)
    examples = region_examples(rows, {s.id: s.response for s in scored.samples})
    threshold = f"quantile q = {config.quantile:g}" if config.threshold_mode == "quantile" else f"p < {config.tau:g}"
    caption = (
        f"Low-confidence CUDA-sensitive regions: {len(result.regions):,} in {scored.stats['n_samples']} samples under "
        f"{_model_text(scored.stats['model'])} (low confidence: {threshold}; clustering: {config.regions.method}, max gap "
        f"{config.regions.max_gap}). One example for each of the {len(examples)} most frequent kinds, the region shaded."
    )
    source = {**inputs.scores_source(), "objective": inputs.config.objective or "defaults", "regions": len(result.regions),
              "regions_by_kind": result.stats["regions_by_kind"], "examples": [f"{e.sample}:{e.line}" for e in examples]}
    return region_examples_figure(examples), caption, source


def _sweep(inputs: Inputs) -> tuple[Any, str, dict[str, Any]]:
    scored, config = inputs.scored(), inputs.objective()
    sweep = threshold_sweep(scored.table, config)
    current = config.quantile if config.threshold_mode == "quantile" else config.tau
    name = "q" if config.threshold_mode == "quantile" else "τ"
    caption = (
        f"Threshold sweep of the CuSeT objective on {scored.stats['n_samples']} samples under {_model_text(scored.stats['model'])}: "
        f"(a) share of response tokens masked (policy {config.policy}), overall and among CUDA-sensitive and other tokens; "
        f"(b) effective sample size (Σw)²/Σw² of the region-aware sample weights (α = {config.alpha:g}, clipped to "
        f"[{config.w_min:g}, {config.w_max:g}]). Dotted: the configured {name} = {current:g}."
    )
    source = {**inputs.scores_source(), "objective": inputs.config.objective or "defaults", "grid": list(sweep["threshold"]),
              "masked_fraction": [round(v, 5) for v in sweep["masked_fraction"]], "ess": [round(v, 3) for v in sweep["ess"]]}
    return threshold_sweep_figure(sweep, current, config.threshold_mode, scored.table.n_samples), caption, source


def _training(inputs: Inputs) -> tuple[Any, str, dict[str, Any]]:
    runs, source = inputs.training_runs()
    if not runs:
        raise Skip("no fine-tune has logged a training step yet (start one: `cuset train` or the Fine-tunes page)")
    curves = curve_table(runs)
    unfinished = [s for s in source if s["status"] != "completed"]
    caption = (
        f"Training curves of {len(runs)} fine-tune{'s' if len(runs) != 1 else ''} ("
        + ", ".join(f"job {s['job']}: {s['method']}, {s['preset']}, {s['steps']} steps" for s in source)
        + "): per-step mean negative log-likelihood of the gold response tokens, (a) all, (b) CUDA-sensitive, (c) other "
        "tokens; plain NLL, comparable across methods whatever their loss."
        + (f" {len(unfinished)} still running or unfinished (marked in the legend)." if unfinished else "")
    )
    return training_curves_figure(curves), caption, {"jobs": source}


def _correctness(inputs: Inputs) -> tuple[Any, str, dict[str, Any]]:
    frame, source = inputs.eval_frame()
    if frame.empty:
        raise Skip("no completed evaluation run of a model yet (run `cuset eval`, or tick 'Evaluate' when starting a fine-tune)")
    by_level = correctness_table(frame, "level")
    has_split = frame["split"].astype(str).str.len().gt(0).any()
    by_split = correctness_table(frame, "split", overall=False) if has_split else None  # 'all' is in panel (a)
    backends = ", ".join(sorted(set(frame["backend"])))
    caption = (
        "Functional correctness by method: share of candidates that compile and match the reference in every trial, "
        "(a) by KernelBench level" + (", (b) on in-distribution vs held-out op families" if has_split else "")
        + f". {len(frame)} candidates from {len(source)} evaluation run{'s' if len(source) != 1 else ''} ({backends} backend); "
        "runs of one method are pooled. Error bars: 95% Wilson intervals. Overall: "
        + ", ".join(f"{r.method} {r.correct}/{r.n}" for r in sorted(by_level[by_level["level"] == "all"].itertuples(),
                                                                    key=lambda r: method_sort_key(r.method))) + " correct."
    )
    table = by_level.assign(level=by_level["level"].astype(str))
    return correctness_figure(table, by_split), caption, {"eval_runs": source}


def _experiments(inputs: Inputs) -> tuple[Any, str, dict[str, Any]]:
    """From the committed analysis/results/NAME/ files only: no workspace, no rerun."""
    from cuset.figures.experiment import experiment_caption, experiment_figure, experiment_results

    results = experiment_results()
    if not results:
        raise Skip("no experiment results in analysis/results/ (run `python -m analysis.experiment NAME`)")
    out = Path(inputs.config.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    from cuset.experiment import RESULTS_DIR

    tables = "\n".join(f"## {name}\n\n" + (RESULTS_DIR / name / "table.md").read_text() for name in results if (RESULTS_DIR / name / "table.md").is_file())
    atomic_write(out / "experiments_table.md", lambda tmp: tmp.write_text(tables))
    return experiment_figure(results), experiment_caption(results), {"experiments": sorted(results), "table": "experiments_table.md"}


def _findings(inputs: Inputs) -> tuple[Any, str, dict[str, Any]]:
    from cuset.figures.findings import findings_caption, findings_figure
    from cuset.findings import DEFAULT_RESULTS, read_results

    if not (DEFAULT_RESULTS / "findings.json").is_file():
        raise Skip(f"no {DEFAULT_RESULTS / 'findings.json'} (run `python -m analysis.findings`)")
    result = read_results(DEFAULT_RESULTS)
    return findings_figure(result), findings_caption(result), {"findings": str(DEFAULT_RESULTS / "findings.json")}


def _latest_finetune() -> Any:
    from cuset import jobs

    done = [j for j in jobs.list_jobs(limit=1000) if j.kind == "train" and j.status == "completed"]
    return max(done, key=lambda j: j.id) if done else None


def _diff(inputs: Inputs) -> tuple[Any, str, dict[str, Any]]:
    """The newest completed fine-tune against its base model, on the figures' data."""
    from cuset.data import load
    from cuset.diff import TokenizerMismatch, run_diff
    from cuset.figures.analysis import diff_figure
    from cuset.models import ModelError, display_name

    job = _latest_finetune()
    if job is None:
        raise Skip("no completed fine-tune in the workspace to compare with its base (start one: `cuset train` or the Fine-tunes page)")
    samples = load(inputs.config.data)
    samples = samples[: inputs.config.limit] if inputs.config.limit else samples
    try:
        _, summary = run_diff(samples, job.model, f"job:{job.id}", inputs.objective())
    except (ModelError, TokenizerMismatch) as exc:
        raise Skip(f"job {job.id} against {job.model}: {exc}") from None
    o, pm = summary["overall"], summary["preserved_vs_masked"]
    caption = (
        f"What fine-tuning changed: job {job.id} ({job.method}) against its base {display_name(job.model)} on {o['samples']} samples of "
        f"the {inputs.config.data} data ({o['tokens']:,} tokens; mean Δ log p {o['mean_delta_logp']:+.3f} nats, {o['gained_share']:.0%} "
        f"of tokens gained). (a) Mean Δ log p per sensitivity category. (b) Tokens inside the regions CuSeT preserves (found on the "
        f"base model's scores) against the tokens it masks; the difference's 95% interval resamples whole samples."
    )
    return diff_figure(summary), caption, {"job": job.id, "base": job.model, "samples": o["samples"], "tokens": o["tokens"],
                                           "difference": pm["difference"], "interval": pm["interval"]}


def _failures(inputs: Inputs) -> tuple[Any, str, dict[str, Any]]:
    """The newest completed evaluation run of a model with at least one located failure."""
    from cuset.evaluate.results import ResultStore
    from cuset.failures import run_failures
    from cuset.figures.analysis import failures_figure
    from cuset.models import ModelError

    runs = ResultStore().runs(limit=10_000)
    if runs.empty:
        raise Skip("no evaluation run yet (run `cuset eval`)")
    runs = runs[(runs["status"] == "completed") & ~runs["method"].isin(HARNESS_CHECKS) & (runs["model"].astype(str) != "")]
    for run_id in runs["id"]:  # newest first
        try:
            report = run_failures(int(run_id), config=inputs.objective())
        except (ModelError, ValueError):
            continue
        if report["overall"]["n"]:
            break
    else:
        raise Skip("no completed evaluation run of a model has a failure located in its CUDA source")
    o = report["overall"]
    caption = (
        f"Do failures fall inside low-confidence CUDA-sensitive regions? Run {report['run']} ({report['label']}): of {report['failed']} "
        f"failed candidates, {o['n']} were located in their CUDA source (error line, or the kernel lines storing the output of a wrong "
        f"result) and {o['inside']} ({o['share']:.0%}) lie inside a region found on {report['model']}'s scores of the code, against "
        f"{o['chance']:.0%} for random lines of the same kernels. {report['unlocated']} unlocated. Bars: 95% Wilson intervals."
    )
    return failures_figure(report), caption, {"run": report["run"], "model": report["model"], "located": o["n"], "inside": o["inside"],
                                              "chance": o["chance"], "unlocated": report["unlocated"]}


@dataclass(frozen=True)
class FigureSpec:
    name: str
    title: str
    draw: Callable[[Inputs], tuple[Any, str, dict[str, Any]]]


FIGURES = (
    FigureSpec("confidence", "Confidence of CUDA-sensitive vs other tokens", _confidence),
    FigureSpec("findings_by_model", "The paper's two findings by model", _findings),
    FigureSpec("region_examples", "Low-confidence sensitive regions: examples", _regions),
    FigureSpec("threshold_sweep", "Threshold sweep: masked fraction and effective sample size", _sweep),
    FigureSpec("training_curves", "Training curves", _training),
    FigureSpec("correctness", "Correctness by method and level", _correctness),
    FigureSpec("experiments", "The experiments: pass@1 by method, and each method against sft", _experiments),
    FigureSpec("confidence_diff", "What fine-tuning changed: confidence diff against the base model", _diff),
    FigureSpec("failures_in_regions", "Do failures fall inside low-confidence sensitive regions?", _failures),
)


def make_all(out_dir: str | Path | None = None, formats: Sequence[str] | str | None = None, model: str | None = None,
             progress: Progress | None = None, config: FiguresConfig | None = None) -> list[FigureFile]:
    """Draw every figure from the workspace's stored results into `out_dir` (default
    <workspace>/figures) and write its manifest.json; returns one FigureFile per figure (a
    skipped one says why). `formats` default: pdf, svg and png; `model` default: $CUSET_MODEL
    or the default model. `progress(phase, done, total)`: phases 'scoring' (samples, only when
    some are not cached yet) and 'figures'. `config` sets the data, limit and objective (and
    the folder, formats and model where the arguments leave them out)."""
    overrides = {"out_dir": str(out_dir) if out_dir else None, "formats": list(check_formats(formats)) if formats else None, "model": model}
    config = replace(config or FiguresConfig(), **{k: v for k, v in overrides.items() if v}).resolved()
    out = Path(config.out_dir)
    inputs = Inputs(config, progress)
    made: list[FigureFile] = []
    for index, spec in enumerate(FIGURES):
        if progress:
            progress("figures", index, len(FIGURES))
        try:
            fig, caption, source = spec.draw(inputs)
        except Skip as exc:
            for fmt in FORMATS:  # the folder matches the manifest: no stale file of a skipped figure
                (out / f"{spec.name}.{fmt}").unlink(missing_ok=True)
            made.append(FigureFile(spec.name, spec.title, skipped=str(exc)))
            continue
        files = save_figure(fig, out, spec.name, config.formats)
        made.append(FigureFile(spec.name, spec.title, caption, {k: str(v) for k, v in files.items()}, source))
    if progress:
        progress("figures", len(FIGURES), len(FIGURES))
    write_manifest(out, made, config)
    return made


def write_manifest(out: Path, figures: Sequence[FigureFile], config: FiguresConfig) -> Path:
    """out/manifest.json: the config, when, and per figure its title, caption, files (names
    relative to the folder), data summary or the reason it was skipped."""
    now = time.time()
    data = {
        "generated": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(now)),
        "generated_unix": now,
        "config": config.to_dict(),
        "figures": [{**asdict(f), "files": {k: Path(v).name for k, v in f.files.items()}} for f in figures],
    }
    path = out / "manifest.json"
    out.mkdir(parents=True, exist_ok=True)
    atomic_write(path, lambda tmp: tmp.write_text(json.dumps(data, indent=2, default=str)))
    return path


def read_manifest(out_dir: str | Path | None = None) -> tuple[dict[str, Any], list[FigureFile]] | None:
    """(manifest fields, figures with absolute file paths) of a figures folder; None when it
    has none yet or it cannot be read."""
    out = Path(out_dir) if out_dir else default_dir()
    try:
        data = json.loads((out / "manifest.json").read_text())
    except (OSError, ValueError):
        return None
    figures = [FigureFile(**{**f, "files": {k: str(out / v) for k, v in f["files"].items() if (out / v).is_file()}}) for f in data.get("figures", [])]
    return data, figures


def latest_job() -> Any:
    """The newest figures job (a cuset.jobs.Job), or None."""
    from cuset import jobs

    return next((j for j in jobs.list_jobs(limit=1000) if j.kind == FiguresConfig.JOB_KIND), None)


__all__ = [
    "FIGURES", "FORMATS", "FigureFile", "FiguresConfig", "Skip", "confidence_figure", "confidence_histogram",
    "correctness_figure", "correctness_table", "curve_table", "default_dir", "latest_job", "make_all", "read_manifest",
    "region_examples", "region_examples_figure", "save_figure", "threshold_sweep", "threshold_sweep_figure",
    "training_curves_figure",
]
