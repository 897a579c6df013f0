"""Loaders and their errors: every bad input names the file, line and field."""

from __future__ import annotations

import json

import pytest

from cuset.data import DataError, Sample, fingerprint, load, load_bytes, load_code_file, load_hf, load_jsonl, samples_from_text


def write_jsonl(path, records):
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    return path


def test_jsonl_round_trip_and_field_map(tmp_path):
    sample = Sample(id="a", instruction="do", response="__global__ void k() {}", family="elementwise", style=("guarded",))
    path = write_jsonl(tmp_path / "d.jsonl", [sample.to_json()])
    assert load(path) == [sample]
    mapped = write_jsonl(tmp_path / "m.jsonl", [{"name": "b", "prompt": "p", "completion": "c"}])
    loaded = load_jsonl(mapped, {"id": "name", "instruction": "prompt", "response": "completion"})
    assert (loaded[0].id, loaded[0].instruction, loaded[0].response) == ("b", "p", "c")


def test_jsonl_errors_name_the_line_and_field(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"id": "a", "instruction": "", "response": "x"}\n{"id": "b", "instruction": ""}\n')
    with pytest.raises(DataError, match=r"bad.jsonl: line 2: missing required field 'response'"):
        load(path)
    path.write_text('{"id": "a", "instruction": "", "response": "x"}\n\n{"id": "b", oops}\n')
    with pytest.raises(DataError, match=r"line 3: not valid JSON"):
        load(path)
    path.write_text('{"id": "a", "instruction": "", "response": "x"}\n{"id": "a", "instruction": "", "response": "y"}\n')
    with pytest.raises(DataError, match="duplicate id 'a'"):
        load(path)
    path.write_text('{"id": "a", "instruction": "", "response": "   "}\n')
    with pytest.raises(DataError, match="line 1: field 'response' is empty"):
        load(path)
    path.write_text('[1, 2]\n')
    with pytest.raises(DataError, match="line 1: expected a JSON object"):
        load(path)


def test_empty_binary_and_non_utf8_files(tmp_path):
    empty = tmp_path / "e.cu"
    empty.write_bytes(b"")
    with pytest.raises(DataError, match="empty"):
        load(empty)
    binary = tmp_path / "b.jsonl"
    binary.write_bytes(b"\x7fELF\x00\x01\x02" * 10)
    with pytest.raises(DataError, match="binary"):
        load(binary)
    latin = tmp_path / "l.cu"
    latin.write_bytes(b"int a;\n// caf\xe9\n")
    with pytest.raises(DataError, match=r"line 2: .* not valid UTF-8"):
        load(latin)


def test_large_code_file_is_refused_with_its_size(tmp_path):
    big = tmp_path / "big.cu"
    big.write_text("int x = 0;\n" * 500_000)  # 5.5 MB
    with pytest.raises(DataError, match=r"big.cu: the file is 5.5 MB, over the 2.1 MB limit"):
        load(big)


def test_code_file_and_paste(tmp_path):
    path = tmp_path / "kernel.cu"
    path.write_text("__global__ void k() {}\n")
    sample = load_code_file(path)
    assert sample.id == "kernel" and sample.response.startswith("__global__")
    with pytest.raises(DataError, match="pasted text is empty"):
        samples_from_text("  \n ")


def test_parquet_and_hf_folder(tmp_path):
    import datasets
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [{"id": "p1", "instruction": "i", "response": "r"}, {"id": "p2", "instruction": "i", "response": ""}]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "d.parquet")
    with pytest.raises(DataError, match=r"d.parquet: row 2: field 'response' is empty"):
        load(tmp_path / "d.parquet")
    rows[1]["response"] = "s"
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "d.parquet")
    assert [s.id for s in load(tmp_path / "d.parquet")] == ["p1", "p2"]
    datasets.Dataset.from_list(rows).save_to_disk(str(tmp_path / "hf"))
    assert [s.response for s in load_hf(str(tmp_path / "hf"))] == ["r", "s"]
    with pytest.raises(DataError, match="could not be loaded"):
        load_hf(str(tmp_path / "nothing-here"))


def test_unknown_inputs(tmp_path):
    with pytest.raises(DataError, match="no such file"):
        load(tmp_path / "missing.jsonl")
    odd = tmp_path / "x.bin"
    odd.write_bytes(b"abc")
    with pytest.raises(DataError, match="unknown file type"):
        load(odd)


def test_fingerprint_changes_with_content():
    a = [Sample(id="a", instruction="", response="x")]
    b = [Sample(id="a", instruction="", response="y")]
    assert fingerprint(a) != fingerprint(b) and fingerprint(a) == fingerprint(list(a))


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("data.jsonl", b"\x00\x01\x02binary" * 50, "data.jsonl: this looks like a binary file"),
        ("data.jsonl", b'{"id": "a", "instruction": "", "response": "x"}\n{"id": "b", oops\n', "data.jsonl: line 2: not valid JSON"),
        ("data.parquet", b"not parquet at all", "data.parquet: not a readable Parquet file"),
        ("notes.docx", b"PK\x03\x04", "unknown file type '.docx'"),
        ("empty.cu", b"", "empty.cu: the file is empty"),
    ],
)
def test_uploaded_bytes_errors(name, content, message):
    with pytest.raises(DataError, match=message):
        load_bytes(name, content)


def test_uploaded_bytes_load():
    records = [{"id": f"u{i}", "instruction": "", "response": f"__global__ void k{i}() {{}}"} for i in range(3)]
    assert [s.id for s in load_bytes("mine.jsonl", "\n".join(json.dumps(r) for r in records).encode())] == ["u0", "u1", "u2"]
    assert load_bytes("k.cu", b"__global__ void k() {}")[0].id == "k"
