"""Paper figures: the data behind each figure against hand computations, every figure as valid
PDF/SVG/PNG, make_all on a workspace (figures without data skipped with a reason, all five once
there is data), and the figures job through cuset.jobs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from cuset import figures
from cuset.confidence import TokenTable
from cuset.evaluate.metrics import wilson_interval
from cuset.figures.draw import region_example
from cuset.objective import ObjectiveConfig, compute
from cuset.sensitivity import CATEGORY_BIT

MAGIC = {"pdf": b"%PDF-", "png": b"\x89PNG\r\n\x1a\n"}


def token_table(p_rows: list[list[float]], bit_rows: list[list[int]]) -> TokenTable:
    """A TokenTable from literal per-sample probabilities and category bits (3 characters per token)."""
    lengths = [len(r) for r in p_rows]
    pos = np.concatenate([np.arange(n) for n in lengths]).astype(np.int32)
    n = int(sum(lengths))
    return TokenTable(offsets=np.r_[0, np.cumsum(lengths)].astype(np.int64), p=np.concatenate(p_rows).astype(np.float32),
                      bits=np.concatenate(bit_rows).astype(np.uint16), stmt=np.full(n, -1, np.int32),
                      stmt_kind=np.full(n, -1, np.int8), starts=pos * 3, ends=pos * 3 + 3)


def random_table(seed: int = 0, samples: int = 4, length: int = 40) -> TokenTable:
    rng = np.random.default_rng(seed)
    guard = CATEGORY_BIT["bounds_guard"]
    return token_table([list(rng.random(length)) for _ in range(samples)],
                       [list(np.where(rng.random(length) < 0.3, guard, 0)) for _ in range(samples)])


def candidates() -> pd.DataFrame:
    """Two methods x two levels, hand-countable: sft 2/3 and 0/2, cuset 3/3 and 1/2."""
    rows = [("sft", 1, "in_distribution", c) for c in (True, True, False)] + [("sft", 2, "held_out", c) for c in (False, False)]
    rows += [("cuset", 1, "in_distribution", c) for c in (True, True, True)] + [("cuset", 2, "held_out", c) for c in (True, False)]
    return pd.DataFrame([{"method": m, "level": lv, "split": s, "correct": c, "task_id": f"t{i}"} for i, (m, lv, s, c) in enumerate(rows)])


def test_confidence_histogram_shares_per_group():
    hist = figures.confidence_histogram(np.array([0.02, 0.6, 0.97, 1.0, 0.1]), np.array([True, True, False, False, False]), bins=4)
    assert hist["left"].tolist() == [0.0, 0.25, 0.5, 0.75]
    assert hist["sensitive"].tolist() == [0.5, 0.0, 0.5, 0.0]
    assert hist["other"].tolist() == pytest.approx([1 / 3, 0.0, 0.0, 2 / 3])  # p = 1.0 falls in the last bin


def test_threshold_sweep_is_the_objective_over_the_grid_and_monotone():
    table = random_table()
    config = ObjectiveConfig(policy="protect_sensitive")
    sweep = figures.threshold_sweep(table, config, grid=(0.1, 0.25, 0.5, 0.75, 0.9))
    assert sweep["threshold"].tolist() == [0.1, 0.25, 0.5, 0.75, 0.9]
    # a higher quantile marks more tokens low; this policy masks exactly the low non-sensitive ones
    assert np.all(np.diff(sweep["low_fraction"]) > 0)
    assert np.all(np.diff(sweep["masked_fraction"]) >= 0) and sweep["masked_fraction"].iloc[-1] > sweep["masked_fraction"].iloc[0]
    assert (sweep["masked_fraction_sensitive"] == 0).all()
    stats = compute(table, ObjectiveConfig(policy="protect_sensitive", quantile=0.25)).stats
    row = sweep[sweep["threshold"] == 0.25].iloc[0]
    assert row["masked_fraction"] == pytest.approx(stats["masked_fraction"])
    assert row["ess"] == pytest.approx(stats["effective_sample_size"]) and row["ess_fraction"] == pytest.approx(stats["effective_sample_size"] / 4)
    absolute = figures.threshold_sweep(table, ObjectiveConfig(threshold_mode="absolute"), grid=(0.2, 0.6))
    assert absolute["low_fraction"].tolist() == pytest.approx([float((table.p < 0.2).mean()), float((table.p < 0.6).mean())])


CODE = "__global__ void k(float* x, int n) {\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) {\n\tx[i] = 0;\n    }\n}\n"


def region_row(text: str, piece: str, kind: str, size: int, mean_p: float, sample: str = "s") -> dict:
    a = text.index(piece)
    return {"sample": sample, "kind": kind, "chars": [a, a + len(piece)], "line": text.count("\n", 0, a) + 1, "size": size, "mean_p": mean_p}


def test_region_examples_choose_one_per_frequent_kind_and_shade_the_region():
    rows = [
        region_row(CODE, "i < n", "bounds guard", 3, 0.2),
        region_row(CODE, "if (i < n) {\n\tx[i]", "bounds guard", 6, 0.3),  # the biggest bounds guard
        region_row(CODE, "blockIdx.x * blockDim.x", "index math", 5, 0.1),
        region_row(CODE, "__global__", "kernel qualifier", 1, 0.4),
    ]
    examples = figures.region_examples(rows, {"s": CODE}, max_examples=2, context=1)
    assert [e.kind for e in examples] == ["bounds guard", "index math"]  # two bounds guards: the most frequent kind first
    guard = examples[0]
    assert (guard.size, guard.line, guard.first_line) == (6, 3, 2)
    assert guard.lines == [CODE.split("\n")[i].expandtabs(4) for i in (1, 2, 3, 4)]
    shaded = "".join(guard.lines[i][a:b] for i, a, b in guard.spans)
    assert shaded == "if (i < n) {x[i]"  # the region's characters, tab expanded, blanks at line edges unshaded
    assert guard.spans == [(1, 4, 16), (2, 4, 8)]
    cut = region_example(region_row(CODE, "threadIdx.x", "thread indexing", 2, 0.5), CODE, context=0, width=40)
    assert cut.lines[0].endswith("…") and len(cut.lines[0]) == 40 and cut.spans == [(0, 38, 39)]  # shading stops at the cut


def test_correctness_table_matches_hand_counts_and_the_bars_show_it():
    table = figures.correctness_table(candidates(), "level")
    got = {(r.method, r.level): (r.n, r.correct, r.rate) for r in table.itertuples()}
    assert got == {("sft", "1"): (3, 2, 2 / 3), ("sft", "2"): (2, 0, 0.0), ("sft", "all"): (5, 2, 0.4),
                   ("cuset", "1"): (3, 3, 1.0), ("cuset", "2"): (2, 1, 0.5), ("cuset", "all"): (5, 4, 0.8)}
    row = table[(table["method"] == "sft") & (table["level"] == "1")].iloc[0]
    assert (row["low"], row["high"]) == pytest.approx(wilson_interval(2, 3))
    by_split = figures.correctness_table(candidates(), "split", overall=False)
    fig = figures.correctness_figure(table, by_split)
    level_axes = fig.axes[0]
    heights = sorted(round(b.get_height(), 6) for b in level_axes.patches)
    assert heights == sorted(round(100 * r, 6) for r in table["rate"])
    assert [t.get_text() for t in level_axes.get_xticklabels()] == ["level 1", "level 2", "all"]
    assert [t.get_text() for t in fig.axes[1].get_xticklabels()] == ["in-distribution", "held-out"]
    nothing = figures.correctness_table(candidates().assign(correct=False))  # 0% everywhere: error bars from 0 up
    assert (nothing["rate"] == 0).all() and len(figures.correctness_figure(nothing).axes[0].patches) == 6


def test_curve_table_keeps_steps_and_marks_missing_metrics():
    runs = {"sft (job 1)": ("sft", [{"step": 1, "nll": 2.0, "nll_sensitive": 3.0, "nll_other": 1.5}, {"step": 2, "nll": 1.5}]),
            "cuset (job 2)": ("cuset", [{"step": 1, "nll": 2.1, "nll_sensitive": None, "nll_other": 1.9}])}
    curves = figures.curve_table(runs)
    assert curves[["run", "method", "step"]].values.tolist() == [["sft (job 1)", "sft", 1], ["sft (job 1)", "sft", 2], ["cuset (job 2)", "cuset", 1]]
    assert curves["nll"].tolist() == [2.0, 1.5, 2.1]
    assert np.isnan(curves["nll_sensitive"].iloc[1]) and np.isnan(curves["nll_sensitive"].iloc[2])


def every_figure():
    table = random_table()
    examples = figures.region_examples([region_row(CODE, "i < n", "bounds guard", 3, 0.2)], {"s": CODE})
    runs = {"sft (job 1)": ("sft", [{"step": s, "nll": 2 / s, "nll_sensitive": 3 / s, "nll_other": 1 / s} for s in (1, 2, 3)])}
    return {
        "confidence": lambda: figures.confidence_figure(table),
        "region_examples": lambda: figures.region_examples_figure(examples),
        "threshold_sweep": lambda: figures.threshold_sweep_figure(figures.threshold_sweep(table, ObjectiveConfig(), (0.2, 0.5)), 0.25, n_samples=4),
        "training_curves": lambda: figures.training_curves_figure(figures.curve_table(runs)),
        "correctness": lambda: figures.correctness_figure(figures.correctness_table(candidates()), figures.correctness_table(candidates(), "split")),
    }


@pytest.mark.parametrize("name", ["confidence", "region_examples", "threshold_sweep", "training_curves", "correctness"])
def test_every_figure_writes_valid_pdf_svg_png(tmp_path, name):
    files = figures.save_figure(every_figure()[name](), tmp_path, name)
    assert set(files) == {"pdf", "svg", "png"}
    for fmt, path in files.items():
        data = path.read_bytes()
        assert len(data) > 1000
        assert data.startswith(MAGIC[fmt]) if fmt in MAGIC else b"<svg" in data[:2000]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary files left
    first = files["pdf"].read_bytes()
    figures.save_figure(every_figure()[name](), tmp_path, name, ["pdf"])
    assert files["pdf"].read_bytes() == first  # no date in the metadata: same data, same bytes


def test_formats_and_config_are_validated(tmp_path):
    assert figures.draw.check_formats("PDF, .png") == ("pdf", "png")
    with pytest.raises(ValueError, match="choose from pdf, svg, png"):
        figures.FiguresConfig(formats=["gif"])
    with pytest.raises(ValueError, match="limit"):
        figures.FiguresConfig(limit=-1)
    config = figures.FiguresConfig(formats=["svg"], limit=3, objective="q30")
    assert figures.FiguresConfig.load(config.save(tmp_path / "c.yaml")) == config


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    """A workspace of its own (jobs and evaluation runs of other tests stay out), on the tiny model."""
    path = tmp_path_factory.mktemp("figures-workspace")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CUSET_WORKSPACE", str(path))
        patch.setenv("CUSET_MODEL", "tiny")
        yield path


def test_make_all_skips_figures_without_data_and_says_why(workspace):
    out = workspace / "figures"
    out.mkdir(exist_ok=True)
    (out / "correctness.png").write_bytes(b"stale")
    phases = []
    made = figures.make_all(config=figures.FiguresConfig(limit=4), progress=lambda phase, done, total: phases.append((phase, done, total)))
    status = {f.name: f.skipped for f in made}
    assert [f.name for f in made] == [s.name for s in figures.FIGURES]
    assert status["confidence"] == status["region_examples"] == status["threshold_sweep"] == ""
    assert "fine-tune" in status["training_curves"] and "evaluation run" in status["correctness"]
    assert not (out / "correctness.png").exists()  # a skipped figure leaves no stale file behind
    assert ("scoring", 4, 4) in phases and phases[-1] == ("figures", len(figures.FIGURES), len(figures.FIGURES))
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["config"]["model"] == "tiny" and manifest["config"]["limit"] == 4
    entry = {f["name"]: f for f in manifest["figures"]}["confidence"]
    assert entry["files"] == {"pdf": "confidence.pdf", "svg": "confidence.svg", "png": "confidence.png"}
    assert entry["source"]["samples"] == 4 and entry["source"]["scored_now"] == 4 and "4 samples" in entry["caption"]
    info, listed = figures.read_manifest(out)
    # findings_by_model and experiments are drawn from the committed analysis/results/, not the workspace
    assert [f.name for f in listed if f.made] == ["confidence", "findings_by_model", "region_examples", "threshold_sweep", "experiments"]
    assert all(Path(p).is_file() for f in listed for p in f.files.values())


def test_make_all_draws_curves_and_correctness_once_there_is_data(workspace, tmp_path):
    from cuset.evaluate.results import ResultStore
    from cuset.jobs import JobStore, job_folder

    store = JobStore()
    job_id = store.create("train", "cuset", "tiny", "tiny")
    store.update(job_id, status="completed")
    job_folder(job_id).mkdir(parents=True, exist_ok=True)
    (job_folder(job_id) / "metrics.jsonl").write_text("".join(
        json.dumps({"step": s, "loss": 2 / s, "nll": 2 / s, "nll_sensitive": 3 / s, "nll_other": 1 / s}) + "\n" for s in (1, 2, 3)))
    results = ResultStore()
    for method in ("sft", "cuset", "reference"):
        run = results.create_run(label=method, model="tiny", method=method, suite="bundled", backend="cpu")
        part = candidates()
        part = part[part["method"] == (method if method != "reference" else "sft")]
        results.add_results(run, [{**r, "sample": 0, "status": "correct" if r["correct"] else "wrong_result", "compiled": True,
                                   "family": "f"} for r in part.drop(columns="method").to_dict("records")])
        results.finish_run(run, "completed", {})
    made = {f.name: f for f in figures.make_all(tmp_path, formats="png", config=figures.FiguresConfig(limit=4))}
    # confidence_diff / failures_in_regions need a real fine-tune / located failures (tests/test_diff.py,
    # test_failures.py); experiments reads committed analysis/results/NAME/ files (tests/test_experiment.py)
    analysis = ("confidence_diff", "failures_in_regions", "experiments")
    assert all(f.made for n, f in made.items() if n not in analysis), {n: f.skipped for n, f in made.items()}
    assert "job" in made["confidence_diff"].skipped and "located" in made["failures_in_regions"].skipped
    from cuset.figures.experiment import experiment_results

    assert made["experiments"].made == bool(experiment_results())
    assert made["training_curves"].source["jobs"] == [{"job": job_id, "method": "cuset", "preset": "tiny", "status": "completed", "steps": 3}]
    assert [r["method"] for r in made["correctness"].source["eval_runs"]] == ["cuset", "sft"]  # the reference check is not a method
    assert "10 candidates from 2 evaluation runs" in made["correctness"].caption and "sft 2/5, cuset 4/5 correct" in made["correctness"].caption
    assert set(made["correctness"].files) == {"png"}


def test_figures_job_runs_through_the_job_runner(workspace):
    from cuset import jobs

    job = jobs.submit(figures.FiguresConfig(limit=3, formats=["svg"]))
    assert (job.kind, job.method, job.preset, job.model) == ("figures", "figures", "svg", "tiny")
    done = jobs.wait(job.id, timeout=180)
    assert done.status == "completed", jobs.read_log(job.id)
    assert "confidence" in done.result["made"]
    assert set(done.result["made"]) | set(done.result["skipped"]) == {f.name for f in figures.FIGURES}
    assert Path(done.result["out_dir"]) == (workspace / "figures").resolve()
    assert (workspace / "figures" / "confidence.svg").is_file()
    assert figures.latest_job().id == job.id


def test_the_analysis_command_writes_the_figures_and_rejects_bad_formats(workspace, tmp_path, capsys):
    from analysis.figures import main

    assert main(["--out", str(tmp_path), "--formats", "png", "--limit", "3"]) == 0
    printed = capsys.readouterr().out
    assert f"{tmp_path}/confidence.png" in printed and (tmp_path / "manifest.json").is_file()
    assert main(["--formats", "gif"]) == 2
    assert "choose from pdf, svg, png" in capsys.readouterr().err


def test_kept_curves_read_a_results_folders_fine_tunes_and_draw_them(tmp_path):
    """A validation experiment's figure: each kept fine-tune's per-step NLL, the variant named
    by its folder (MODEL-METHOD-sSEED), bad lines named with file and line."""
    from cuset.figures.experiment import kept_curves, write_training_figure

    with pytest.raises(ValueError, match="no kept fine-tune"):
        write_training_figure(tmp_path)
    for name, method, nll in (("tiny-sft-s42", "sft", (1.0, 0.5)), ("tiny-cuset-floor-s42", "cuset", (1.0, 0.8))):
        kept = tmp_path / "models" / name
        kept.mkdir(parents=True)
        (kept / "config.yaml").write_text(f"method: {method}\nmodel: tiny\nseed: 42\n")
        (kept / "metrics.jsonl").write_text("".join(json.dumps({"step": s + 1, "nll": v, "nll_sensitive": v / 2}) + "\n" for s, v in enumerate(nll)))
    curves = kept_curves(tmp_path)
    assert dict(zip(curves["run"], curves["method"])) == {"tiny-cuset-floor-s42": "cuset-floor", "tiny-sft-s42": "sft"}
    floor = curves[curves["run"] == "tiny-cuset-floor-s42"]
    assert list(floor["step"]) == [1, 2] and list(floor["nll"]) == [1.0, 0.8] and floor["nll_other"].isna().all()
    path = write_training_figure(tmp_path)
    assert path == tmp_path / "training_nll.png" and path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    (tmp_path / "models" / "tiny-sft-s42" / "metrics.jsonl").write_text('{"step": 1, "nll": 1.0}\nnot json\n')
    with pytest.raises(ValueError, match=r"tiny-sft-s42/metrics.jsonl, line 2: not JSON"):
        kept_curves(tmp_path)
    (tmp_path / "models" / "tiny-sft-s42" / "metrics.jsonl").write_text('{"step": 1, "nll": 1.0}\n')
    (tmp_path / "models" / "tiny-sft-s42" / "config.yaml").write_text("[1, 2]\n")
    with pytest.raises(ValueError, match=r"tiny-sft-s42/config.yaml: a mapping .* got list"):
        kept_curves(tmp_path)
