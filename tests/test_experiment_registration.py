"""Pre-registration (cuset.experiment.registration) and variants: the YAML's validation, the
byte-for-byte registered copy, the refusal of a changed registration on resume, and the
results table's registered / exploratory marking on hand-built candidate tables."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml

from cuset.experiment import ExperimentConfig, load_experiment, plan
from cuset.experiment.registration import Registration, RegistrationError, register, table_registration
from cuset.experiment.results import (
    comparisons_table,
    holm,
    markdown_table,
    paired_of,
    paired_table,
    summary_table,
    write_results,
)
from tests.test_experiment import TINY, rows

REPO = Path(__file__).resolve().parents[1]
REGISTRATION = {"primary": "pass@1", "mode": "greedy", "comparisons": ["cuset - sft"], "n_samples": 0, "tasks": 1, "alpha": 0.05,
                "registered": "2026-12-01"}
# what an author writes: comments, flow lists, a date YAML reads as a date; the copy must keep every byte of it
SOURCE = """# a tiny registered experiment
name: reg-test
models: [tiny]
methods: [sft, cuset]      # the two compared
seeds: [42]
preset: tiny
train: {max_steps: 2, max_samples: 4, save_steps: 2}
evaluation: {limit: 1, levels: [1], greedy: true, n_samples: 0, max_new_tokens: 8, options: {trials: 1, timeout_s: 60}}
registration:
  primary: pass@1
  mode: greedy
  comparisons: [cuset - sft]
  n_samples: 0
  tasks: 1
  alpha: 0.05
  registered: 2026-12-01
"""


def source_file(tmp_path: Path, text: str = SOURCE) -> Path:
    path = tmp_path / "reg-test.yaml"
    path.write_text(text)
    return path


# --- the YAML -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"primary": "pass@5"}, r"registration: primary='pass@5': use one of pass@1, compile_rate"),
        ({"comparisons": ["cuset - dft"]}, r"registration: comparisons name \['dft'\], not methods of the experiment; its methods: sft, cuset"),
        ({"comparisons": ["cuset-sft"]}, r"'cuset-sft': write it as 'A - B' with spaces around the minus"),
        ({"comparisons": ["sft - sft"]}, "a method against itself"),
        ({"comparisons": ["cuset - sft", "cuset - sft"]}, "each may appear once"),
        ({"comparisons": []}, "comparisons is empty"),
        ({"n_samples": 4}, r"n_samples=4, but evaluation.n_samples is 0"),
        ({"n_samples": None}, "n_samples is missing"),
        ({"tasks": 49}, r"tasks=49, but the evaluation selects 1 \(suite bundled, levels \[1\]"),
        ({"mode": "sampled"}, r"mode='sampled', but the experiment evaluates greedy only \(set evaluation.n_samples >= 1\)"),
        ({"mode": "best"}, r"mode='best': use one of greedy, sampled"),
        ({"alpha": 1.5}, r"alpha=1.5: use a level in \(0, 1\)"),
        ({"registered": ""}, "registered is missing: give the date it was fixed"),
        ({"registered": "5 Dec"}, "write the date as YYYY-MM-DD"),
        ({"hypothesis": "cuset wins"}, r"registration: unknown field\(s\) \['hypothesis'\]"),
    ],
)
def test_bad_registrations_name_the_file_and_the_field(tmp_path, change, message):
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump({**TINY, "registration": {**REGISTRATION, **change}}))
    with pytest.raises(ValueError, match=rf"^{re.escape(str(path))}: experiment tiny-test, .*{message}"):
        load_experiment(str(path))


def test_a_registration_reads_its_date_and_round_trips(tmp_path):
    config = load_experiment(str(source_file(tmp_path)))
    assert config.registration.registered == "2026-12-01" and config.registration.pairs == [("cuset", "sft")]
    assert config.registration.metric == "correct"
    back = ExperimentConfig.load(config.save(tmp_path / "experiment.yaml"))
    assert back.registration == config.registration
    draft = Registration.from_dict({**REGISTRATION, "registered": None, "draft": True})
    assert draft.registered == "" and draft.draft


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"variants": {"cuset-cuda": {"method": "cusett"}}}, r"variant 'cuset-cuda': method='cusett': a variant varies one of sft"),
        ({"variants": {"cuset_cuda": {"method": "cuset"}}}, r"variant 'cuset_cuda': name it with lower-case letters.*\(no '_'\)"),
        ({"variants": {"dft": {"method": "cuset"}}}, "not after a method"),
        ({"variants": {"other": {"method": "cuset"}}}, r"variant 'other' is not in methods \(sft, cuset-cuda\)"),
        ({"variants": {"cuset-cuda": {"method": "cuset", "train": {"objective": "q30"}}}}, r"train sets \['objective'\]"),
        ({"variants": {"cuset-cuda": {"method": "cuset", "objective": {"mask_scope": "cpp"}}}}, "mask_scope='cpp': use one of"),
        ({"method_seeds": {"dft": [1]}}, r"method_seeds \{'dft': \[1\]\}: each key a method of the experiment"),
        ({"method_seeds": {"sft": [1, 1]}}, "distinct integers"),
    ],
)
def test_bad_variants_say_what_is_valid(tmp_path, change, message):
    data = {**TINY, "methods": ["sft", "cuset-cuda"], "variants": {"cuset-cuda": {"method": "cuset", "objective": {"mask_scope": "cuda"}}}, **change}
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ValueError, match=message):
        load_experiment(str(path))


def test_a_variant_runs_its_method_with_its_objective_beside_the_method(tmp_path):
    config = ExperimentConfig.from_dict({
        **TINY, "methods": ["sft", "cuset", "cuset-cuda"], "train": {**TINY["train"], "objective": {"quantile": 0.3}},
        "variants": {"cuset-cuda": {"method": "cuset", "objective": {"mask_scope": "cuda", "floor": 0.1}, "train": {"lr": 5e-4}}},
        "method_seeds": {"sft": [1, 2], "cuset-cuda": [1, 2]},
    })
    plain, variant = config.train_config("tiny", "cuset", 1), config.train_config("tiny", "cuset-cuda", 1)
    assert plain.method == variant.method == "cuset"
    assert plain.objective == {"quantile": 0.3} and plain.lr == 1e-3  # the tiny preset's
    assert variant.objective == {"quantile": 0.3, "mask_scope": "cuda", "floor": 0.1} and variant.lr == 5e-4
    assert variant.objective_config().mask_scope == "cuda" and variant.objective_config().quantile == 0.3
    keys = [u.key for u in plan(config) if u.kind == "train"]
    assert keys == ["train/tiny/sft/s1", "train/tiny/sft/s2", "train/tiny/cuset/s42", "train/tiny/cuset-cuda/s1", "train/tiny/cuset-cuda/s2"]
    assert {u.run_info.method for u in plan(config)} == {"sft", "cuset", "cuset-cuda"}  # the tables' name of it
    back = ExperimentConfig.load(config.save(tmp_path / "experiment.yaml"))
    assert back.train_config("tiny", "cuset-cuda", 2) == config.train_config("tiny", "cuset-cuda", 2) and back.method_seeds == config.method_seeds


@pytest.mark.parametrize("name", ["cpu-coder", "cpu-135m"])
def test_an_experiment_without_the_new_fields_saves_the_experiment_yaml_it_committed(tmp_path, name):
    saved = load_experiment(name).save(tmp_path / "experiment.yaml")
    assert saved.read_bytes() == (REPO / "analysis" / "results" / name / "experiment.yaml").read_bytes()


def test_the_planned_coder_comparison_is_registered_as_a_draft():
    config = load_experiment("cpu-coder-full")
    assert config.methods == ["base", "sft", "cuset", "cuset-floor", "dft", "profit"]
    floor = config.train_config("coder-0.5b", "cuset-floor", 42).objective_config()
    assert (floor.floor, floor.mask_scope) == (0.1, "all")  # the variant cpu-coder-validation chose
    default = config.train_config("coder-0.5b", "cuset", 42).objective_config()
    assert (default.floor, default.mask_scope) == (0.0, "all")  # today's default
    assert (config.seeds_of("sft"), config.seeds_of("cuset-floor"), config.seeds_of("dft")) == ([42, 43], [42, 43], [42])
    assert (config.evaluation.n_samples, config.evaluation.temperature, config.evaluation.greedy) == (8, 0.8, True)
    r = config.registration
    assert (r.primary, r.mode, r.n_samples, r.tasks, r.draft, r.registered) == ("pass@1", "sampled", 8, 49, True, "")
    assert sorted(r.pairs) == sorted((m, "sft") for m in config.methods if m != "sft")  # each method minus sft


# --- the registered copy ------------------------------------------------------------------------------


def test_the_yaml_is_copied_byte_for_byte_at_the_start_and_checked_on_resume(tmp_path):
    source = source_file(tmp_path)
    out = tmp_path / "results"
    config = load_experiment(str(source))
    line = register(config, out)
    copy = out / "registration.yaml"
    assert "registration copied" in line and copy.read_bytes() == source.read_bytes()
    record = json.loads((out / "registration.json").read_text())
    assert record["sha256"] == hashlib.sha256(source.read_bytes()).hexdigest() and record["history"] == []
    assert record["registration"]["comparisons"] == ["cuset - sft"] and record["source"] == str(source.resolve())
    assert register(load_experiment(str(source)), out) == ""  # the same file: nothing to do, nothing rewritten
    assert json.loads((out / "registration.json").read_text()) == record


def test_a_changed_registration_is_refused_and_a_forced_one_recorded(tmp_path):
    source = source_file(tmp_path)
    out = tmp_path / "results"
    register(load_experiment(str(source)), out)
    original = source.read_bytes()
    source.write_text(SOURCE.replace("comparisons: [cuset - sft]", "comparisons: [sft - cuset]").replace("alpha: 0.05", "alpha: 0.1"))
    changed = load_experiment(str(source))
    with pytest.raises(RegistrationError, match=r'registration.comparisons: \["cuset - sft"\] -> \["sft - cuset"\]; registration.alpha: 0.05 -> 0.1\. '
                                                r".*new experiment name.*--force-reregister"):
        register(changed, out)
    assert (out / "registration.yaml").read_bytes() == original  # never overwritten silently
    # what the table marks by is the registered copy's section, whatever the YAML says now
    registration, notes = table_registration(changed, out)
    assert registration.comparisons == ["cuset - sft"] and notes[0].startswith("Registered copy: registration.yaml (sha256 ")

    source.write_text(SOURCE.replace("# a tiny registered experiment", "# a comment edited"))
    with pytest.raises(RegistrationError, match=r"comments or formatting only"):
        register(load_experiment(str(source)), out)
    source.write_text(SOURCE.replace("methods: [sft, cuset]", "methods: [sft, cuset, dft]"))
    with pytest.raises(RegistrationError, match=r'methods: \["sft", "cuset"\] -> \["sft", "cuset", "dft"\]'):
        register(load_experiment(str(source)), out)

    source.write_text(SOURCE.replace("comparisons: [cuset - sft]", "comparisons: [sft - cuset]"))
    line = register(load_experiment(str(source)), out, force=True)
    assert "RE-REGISTERED" in line
    assert (out / "registration.1.yaml").read_bytes() == original and (out / "registration.yaml").read_bytes() == source.read_bytes()
    record = json.loads((out / "registration.json").read_text())
    assert record["sha256"] == hashlib.sha256(source.read_bytes()).hexdigest()
    assert record["history"][0]["kept_as"] == "registration.1.yaml"
    assert record["history"][0]["changes"] == ['registration.comparisons: ["cuset - sft"] -> ["sft - cuset"]']
    registration, notes = table_registration(load_experiment(str(source)), out)
    assert registration.comparisons == ["sft - cuset"] and "**Re-registered**" in notes[1] and "sft - cuset" in notes[1]
    assert register(load_experiment(str(source)), out) == ""  # the new copy holds from now on

    (out / "registration.yaml").write_bytes(source.read_bytes() + b"# edited in the results folder\n")
    with pytest.raises(RegistrationError, match="the registered copy was edited"):
        register(load_experiment(str(source)), out, force=True)


def test_drafts_future_dates_and_registrations_added_after_the_start_are_refused(tmp_path):
    import datetime as dt

    out = tmp_path / "results"
    draft = SOURCE.replace("registered: 2026-12-01", "registered:\n  draft: true")
    with pytest.raises(RegistrationError, match=r"is a draft \(draft: true\), and a draft does not run"):
        register(load_experiment(str(source_file(tmp_path, draft))), out, force=True)
    config = load_experiment(str(source_file(tmp_path)))
    with pytest.raises(RegistrationError, match=r"registered: 2026-12-01 is after today \(2026-11-30\)"):
        register(config, out, today=dt.date(2026, 11, 30))
    assert not out.exists()
    out.mkdir()
    (out / "state.json").write_text(json.dumps({"units": {"train/tiny/sft/s42": {"status": "done", "job": 3}, "train/tiny/cuset/s42": {"job": None}}}))
    with pytest.raises(RegistrationError, match=r"started without one \(1 unit\(s\) submitted, 1 done.*not be a pre-registration"):
        register(config, out)
    assert not (out / "registration.yaml").exists()
    register(config, out, force=True)
    registration, notes = table_registration(config, out)
    assert registration is not None and "**Registered after the start**" in notes[1] and "not a pre-registration" in notes[1]


def test_the_runner_and_the_command_refuse_a_draft_before_anything_runs(tmp_path, monkeypatch, capsys):
    import analysis.experiment as cli
    from cuset import jobs
    from cuset.experiment import run_experiment

    monkeypatch.setenv("CUSET_WORKSPACE", str(tmp_path / "ws"))
    monkeypatch.setattr(jobs, "submit", lambda cfg: pytest.fail("submitted a draft's fine-tune"))
    path = source_file(tmp_path, SOURCE.replace("registered: 2026-12-01", "draft: true"))
    with pytest.raises(RegistrationError, match="draft"):
        run_experiment(load_experiment(str(path)), tmp_path / "out", wait=False)
    assert not (tmp_path / "out").exists()
    assert cli.main([str(path), "--out", str(tmp_path / "out")]) == 2
    assert "a draft does not run" in capsys.readouterr().err
    assert any(line.startswith("refused: ") and "draft" in line for line in cli_dry_run(path, tmp_path / "out"))


def cli_dry_run(path: Path, out: Path) -> list[str]:
    from cuset.experiment import dry_run

    return dry_run(load_experiment(str(path)), out)


# --- the table ---------------------------------------------------------------------------------------


def test_holm_by_hand():
    # sorted 0.01, 0.03, 0.04 -> 3 x 0.01 = 0.03; 2 x 0.03 = 0.06; max(0.06, 1 x 0.04) = 0.06
    assert list(holm([0.01, 0.04, 0.03])) == pytest.approx([0.03, 0.06, 0.06])
    assert list(holm([0.5, 0.9])) == pytest.approx([1.0, 1.0]) and holm([]).size == 0


def registered_frame() -> pd.DataFrame:
    sft = {"t1": [True, False], "t2": [False, False], "t3": [False, False], "t4": [True, True]}
    cuset = {"t1": [True, True], "t2": [True, False], "t3": [True, True], "t4": [True, False]}
    dft = {"t1": [False, False], "t2": [False, False], "t3": [True, False], "t4": [True, True]}
    greedy = {"t1": [True], "t2": [False], "t3": [False], "t4": [True]}
    return pd.DataFrame(rows("sft", "sampled", sft) + rows("cuset", "sampled", cuset) + rows("dft", "sampled", dft)
                        + rows("sft", "greedy", greedy) + rows("cuset", "greedy", greedy))


def test_registered_comparisons_come_first_with_holm_and_the_rest_are_exploratory():
    frame = registered_frame()
    registration = Registration.from_dict({"primary": "pass@1", "mode": "sampled", "comparisons": ["cuset - sft", "dft - cuset"],
                                           "n_samples": 2, "tasks": 4, "registered": "2026-12-01"})
    paired = comparisons_table(frame, registration, n_boot=200)
    first = paired.iloc[:2]
    assert list(first["comparison"]) == ["cuset - sft", "dft - cuset"] and set(first["registration"]) == {"registered"}
    assert set(paired.iloc[2:]["registration"]) == {"exploratory"} and paired.iloc[2:]["holm_p"].isna().all()
    # cuset - sft, sampled, per task: (1 - .5), (.5 - 0), (1 - 0), (.5 - 1) -> 3 wins, 1 loss; dft - cuset: (0-1), (0-.5), (.5-1), (1-.5)
    c, d = first.iloc[0], first.iloc[1]
    assert (c["wins"], c["losses"], c["diff"]) == (3, 1, pytest.approx((0.5 + 0.5 + 1 - 0.5) / 4))
    assert (d["reference"], d["wins"], d["losses"], d["diff"]) == ("cuset", 1, 3, pytest.approx((-1 - 0.5 - 0.5 + 0.5) / 4))
    assert c["sign_p"] == pytest.approx(0.625) and d["sign_p"] == pytest.approx(0.625)  # 2 x (1 + 4) / 16
    assert list(first["holm_p"]) == pytest.approx(list(holm([0.625, 0.625])))
    # the same comparison in the greedy pass, or in compile rate, is exploratory
    greedy = paired[(paired["method"] == "cuset") & (paired["mode"] == "greedy")]
    assert set(greedy["registration"]) == {"exploratory"}
    assert paired_of(paired)["reference"].eq("sft").all() and len(paired_of(paired, reference=None)) == len(paired)  # the figure's rows: against sft

    text = markdown_table(summary_table(frame), paired, registration, ["Registered copy: registration.yaml (sha256 0123)."])
    registered_at, exploratory_at = text.index("Registered comparisons: pass@1 of the sampled pass"), text.index("Exploratory comparisons")
    assert registered_at < exploratory_at and text.index("Registered copy: registration.yaml") < exploratory_at
    assert "| m | dft - cuset | sampled | 37.5 vs 75.0 | 4 | -37.5 (" in text and "| 0.625 | 1 | no |" in text
    assert "Holm over the 2 comparisons of each model" in text
    exploratory = text[exploratory_at:]
    assert "| m | sampled | correct | cuset |" not in exploratory and "| m | greedy | correct | cuset |" in exploratory
    assert "No registration" not in text


def test_a_registered_comparison_not_evaluated_yet_is_listed_and_counted_in_holm(tmp_path):
    frame = registered_frame()
    registration = Registration.from_dict({"primary": "compile_rate", "mode": "sampled", "comparisons": ["cuset - sft", "profit - sft"],
                                           "n_samples": 2, "tasks": 5, "registered": "2026-12-01"})
    paired = comparisons_table(frame, registration, n_boot=200)
    row = paired.iloc[0]
    assert (row["comparison"], row["metric"], row["registration"]) == ("cuset - sft", "compiled", "registered")
    assert row["holm_p"] == pytest.approx(min(1.0, 2 * row["sign_p"]))  # profit's missing p counts as 1 in a family of 2
    write_results(tmp_path, frame, registration=registration, notes=["note"])
    text = (tmp_path / "table.md").read_text()
    assert "| m | profit - sft | sampled | - | - | not evaluated yet |" in text and "| 4 (registered 5) |" in text
    saved = json.loads((tmp_path / "summary.json").read_text())["registration"]
    assert saved["comparisons"] == ["cuset - sft", "profit - sft"] and saved["notes"] == ["note"]
    assert list(pd.read_csv(tmp_path / "paired.csv")["registration"][:1]) == ["registered"]


def test_without_a_registration_every_comparison_is_exploratory_and_paired_csv_keeps_its_columns(tmp_path):
    frame = registered_frame()
    paired = comparisons_table(frame)
    expected = pd.concat([paired_table(frame, metric=m) for m in ("correct", "compiled")], ignore_index=True)
    pd.testing.assert_frame_equal(paired, expected)
    assert "registration" not in paired.columns and set(paired_of(paired)["registration"]) == {"exploratory"}
    text = markdown_table(summary_table(frame), paired)
    assert "\n\nNo registration: all comparisons exploratory.\n\n| model | mode | share of candidates | method - sft |" in text
    assert "No registration" not in markdown_table(summary_table(frame[frame["method"] == "sft"]), comparisons_table(frame[frame["method"] == "sft"]))


def test_results_only_rewrites_the_committed_coder_results_byte_for_byte(tmp_path, monkeypatch):
    """cpu-coder has no registration: its committed files (table.md with the 'no registration'
    line) are what --results-only writes, from state.json and candidates.csv alone."""
    from cuset.experiment import write_results_only

    monkeypatch.setenv("CUSET_WORKSPACE", str(tmp_path / "ws"))
    committed = REPO / "analysis" / "results" / "cpu-coder"
    out = tmp_path / "cpu-coder"
    shutil.copytree(committed, out, ignore=shutil.ignore_patterns("models", "README.md"))
    write_results_only(load_experiment("cpu-coder"), out)
    for name in ("experiment.yaml", "candidates.csv", "summary.csv", "paired.csv", "table.md", "summary.json"):
        assert (out / name).read_bytes() == (committed / name).read_bytes(), name
    assert not (out / "registration.yaml").exists()
