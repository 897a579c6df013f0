"""The `cuset` CLI: every verb with --json, and bad input that exits 2 with a clear message."""

from __future__ import annotations

import json

import pytest

from cuset.cli import main


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def kernel_file(tmp_path, kernel_text):
    path = tmp_path / "scale.cu"
    path.write_text(kernel_text)
    return path


def test_tag_json(capsys, kernel_file):
    code, out, _ = run(capsys, "tag", str(kernel_file), "--json")
    assert code == 0
    result = json.loads(out)
    categories = {span["category"] for span in result["spans"]}
    assert {"qualifier", "thread_index", "bounds_guard"} <= categories
    guard = next(s for s in result["spans"] if s["category"] == "bounds_guard")
    assert guard["line"] == 3


def test_score_prints_per_token_table_and_json(capsys, kernel_file):
    code, out, err = run(capsys, "score", str(kernel_file), "--model", "tiny", "--quiet")
    assert code == 0, err
    assert "p" in out and "entropy" in out and "rank" in out and "thread_index" in out
    code, out, _ = run(capsys, "score", str(kernel_file), "--model", "tiny", "--json", "--quiet")
    payload = json.loads(out)
    tokens = payload["samples"][0]["tokens"]
    text = "".join(t["text"] for t in tokens)
    assert text == kernel_file.read_text()
    assert payload["stats"]["cache_hits"] == 1  # second call: from the cache
    assert all({"p", "entropy", "rank", "categories", "top_k"} <= set(t) for t in tokens)


def test_regions_stats_objective(capsys, tmp_path, kernel_file):
    data = tmp_path / "d.jsonl"
    text = kernel_file.read_text()
    data.write_text("\n".join(json.dumps({"id": f"s{i}", "instruction": "write it", "response": text.replace("scale", f"k{i}")}) for i in range(3)))
    code, out, err = run(capsys, "regions", str(data), "--model", "tiny", "--json", "--quiet", "--quantile", "0.5")
    assert code == 0, err
    regions = json.loads(out)["regions"]
    assert regions and all(r["size"] >= 1 and r["chars"][0] < r["chars"][1] for r in regions)
    code, out, _ = run(capsys, "stats", str(data), "--model", "tiny", "--json", "--quiet", "--permutations", "20")
    payload = json.loads(out)
    rows = {r["category"]: r for r in payload["confidence"]}
    assert rows["any sensitive"]["tokens"] > 0 and 0 <= rows["any sensitive"]["share_ge_0.5"] <= 1 and rows["any sensitive"]["share_ge_0.9"] <= rows["any sensitive"]["share_ge_0.5"]
    assert rows["any sensitive"]["tokens"] + rows["not sensitive"]["tokens"] == payload["stats"]["n_tokens"]
    clustering = payload["clustering"]
    assert len(clustering["baseline_shares"]) == 20 and 1 / 21 <= clustering["p_value"] <= 1
    config = tmp_path / "c.yaml"
    config.write_text("threshold_mode: absolute\ntau: 0.9\nalpha: 2.0\n")
    code, out, _ = run(capsys, "objective", str(data), "--model", "tiny", "--config", str(config), "--json", "--quiet", "--save", "strict")
    payload = json.loads(out)
    assert payload["config"]["tau"] == 0.9 and payload["stats"]["masked_fraction"] > 0
    code, out, _ = run(capsys, "objective", str(data), "--model", "tiny", "--method", "sft", "--json", "--quiet")
    assert json.loads(out)["stats"]["masked_fraction"] == 0


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "empty"),
        (b"\x7fELF\x00\x00\x01" * 20, "binary"),
        (b"__global__ void k() { int \xff; }", "not valid UTF-8"),
    ],
)
def test_bad_files_exit_2_with_a_message(capsys, tmp_path, content, message):
    path = tmp_path / "bad.cu"
    path.write_bytes(content)
    code, out, err = run(capsys, "tag", str(path))
    assert code == 2 and message in err and "Traceback" not in err and str(path) in err


def test_jsonl_missing_field_names_the_line(capsys, tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text('{"id": "a", "instruction": "", "response": "x"}\n{"id": "b", "response": "y"}\n')
    code, _, err = run(capsys, "score", str(path), "--model", "tiny")
    assert code == 2 and "line 2" in err and "'instruction'" in err


def test_five_megabyte_file_is_refused(capsys, tmp_path):
    path = tmp_path / "huge.cu"
    path.write_text("__global__ void k(float* x) { x[threadIdx.x] = 0; }\n" * 100_000)
    code, _, err = run(capsys, "tag", str(path))
    assert code == 2 and "MB" in err and "limit" in err


def test_unbalanced_braces_give_partial_spans_and_a_note(capsys, tmp_path):
    path = tmp_path / "broken.cu"
    path.write_text("__global__ void k(float* x, int n) {\n  int i = threadIdx.x;\n  if (i < n) {\n    x[i] = 0;\n")
    code, out, _ = run(capsys, "tag", str(path), "--json")
    result = json.loads(out)
    assert code == 0
    assert {"qualifier", "thread_index"} <= {s["category"] for s in result["spans"]}
    assert result["notes"] and "line" in result["notes"][0]


def test_unknown_model_is_a_clear_error(capsys, kernel_file):
    code, _, err = run(capsys, "score", str(kernel_file), "--model", "no-such-org/no-such-model")
    assert code == 2 and "no-such-org/no-such-model" in err and "Valid names" in err


def test_bad_objective_option(capsys, kernel_file):
    code, _, err = run(capsys, "objective", str(kernel_file), "--model", "tiny", "--quantile", "2", "--quiet")
    assert code == 2 and "quantile" in err


def _subcommands(parser) -> list[list[str]]:
    """Every command path of the parser, e.g. ["jobs", "list"]."""
    import argparse

    paths = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                paths.append([name])
                paths += [[name, *rest] for rest in _subcommands(sub)]
    return paths


def test_every_command_prints_its_help(capsys):
    # argparse formats each help text with %: a bare % in a field's help (e.g. "k%") crashed `--help`
    from cuset.cli import build_parser

    paths = _subcommands(build_parser())
    assert ["train"] in paths and ["jobs", "list"] in paths and ["eval"] in paths
    for path in paths:
        with pytest.raises(SystemExit) as done:
            main([*path, "--help"])
        out = capsys.readouterr().out
        assert done.value.code == 0 and "usage:" in out, path
    assert "k%" in _help_of(capsys, "train")


def _help_of(capsys, *path: str) -> str:
    with pytest.raises(SystemExit):
        main([*path, "--help"])
    return capsys.readouterr().out
