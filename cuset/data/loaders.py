"""Reading samples: the bundled corpus, JSONL, Parquet, Hugging Face `datasets`, a code file.

Every loader returns `list[Sample]` or raises `DataError` whose message names the file, the
line (JSONL) or row (Parquet / HF) and the field at fault. Nothing is half-loaded: a data set
either loads whole or not at all. Field mapping renames source columns onto the schema, e.g.
`{"instruction": "prompt", "response": "completion"}`.

    python -c "from cuset.data import load; print(len(load('bundled')))"
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from cuset.data.schema import REQUIRED_FIELDS, Sample

BUNDLED_DIR = Path(__file__).resolve().parent / "bundled"
BUNDLED_CORPUS = BUNDLED_DIR / "corpus.jsonl"
MAX_FILE_BYTES = 256 * 1024 * 1024
MAX_CODE_FILE_BYTES = 2 * 1024 * 1024
CODE_SUFFIXES = {".cu", ".cuh", ".cpp", ".cc", ".c", ".h", ".hpp", ".py", ".md", ".txt"}


class DataError(ValueError):
    """Bad input data; the message says which file, line/row and field, and how to fix it."""


def _check_file(path: Path, limit: int) -> bytes:
    if not path.exists():
        raise DataError(f"{path}: no such file.")
    if path.is_dir():
        raise DataError(f"{path}: is a folder, not a file.")
    size = path.stat().st_size
    if size == 0:
        raise DataError(f"{path}: the file is empty.")
    if size > limit:
        raise DataError(
            f"{path}: the file is {size / 1e6:.1f} MB, over the {limit / 1e6:.1f} MB limit for this input."
        )
    return path.read_bytes()


def decode_text(raw: bytes, where: str) -> str:
    """Bytes -> str, refusing binary data and naming the first bad byte of non-UTF-8 text."""
    if b"\x00" in raw[:8192]:
        raise DataError(f"{where}: this looks like a binary file (it holds NUL bytes), not text.")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise DataError(
            f"{where}: line {line}: byte {exc.start} is not valid UTF-8 ({exc.reason}). "
            "Re-save the file as UTF-8."
        ) from None


def sample_from_record(
    record: Mapping[str, Any], where: str, field_map: Mapping[str, str] | None = None
) -> Sample:
    """Validate one record (after field mapping) and build a Sample; `where` names its place."""
    if not isinstance(record, Mapping):
        raise DataError(f"{where}: expected a JSON object, got {type(record).__name__}.")
    mapping = dict(field_map or {})
    get = {name: mapping.get(name, name) for name in ("id", "instruction", "response", "family", "style", "task", "meta")}
    values: dict[str, Any] = {}
    for name in REQUIRED_FIELDS:
        key = get[name]
        if key not in record or record[key] is None:
            hint = f" (mapped from {key!r})" if key != name else ""
            raise DataError(
                f"{where}: missing required field {name!r}{hint}. Required: {', '.join(REQUIRED_FIELDS)}; "
                "map other column names with --field NAME=COLUMN."
            )
        value = record[key]
        if name == "id" and isinstance(value, int):
            value = str(value)
        if not isinstance(value, str):
            raise DataError(f"{where}: field {name!r} must be a string, got {type(value).__name__}.")
        values[name] = value
    if not values["response"].strip():
        raise DataError(f"{where}: field 'response' is empty: there is nothing to score or train on.")
    style = record.get(get["style"], ()) or ()
    if isinstance(style, str):
        style = (style,)
    meta = record.get(get["meta"]) or {}
    return Sample(
        id=values["id"],
        instruction=values["instruction"],
        response=values["response"],
        family=str(record.get(get["family"]) or ""),
        style=tuple(str(s) for s in style),
        task=str(record.get(get["task"]) or ""),
        meta=dict(meta) if isinstance(meta, Mapping) else {"value": meta},
    )


def _check_unique(samples: list[Sample], where: str) -> list[Sample]:
    seen: dict[str, int] = {}
    for index, sample in enumerate(samples):
        if sample.id in seen:
            raise DataError(
                f"{where}: duplicate id {sample.id!r} (records {seen[sample.id] + 1} and {index + 1}); ids must be unique."
            )
        seen[sample.id] = index
    if not samples:
        raise DataError(f"{where}: no samples in it.")
    return samples


def load_jsonl(path: str | Path, field_map: Mapping[str, str] | None = None) -> list[Sample]:
    """One JSON object per line; blank lines are skipped. Errors name the line."""
    path = Path(path)
    return parse_jsonl(decode_text(_check_file(path, MAX_FILE_BYTES), str(path)), path, field_map)


def parse_jsonl(text: str, path: str | Path, field_map: Mapping[str, str] | None = None) -> list[Sample]:
    """JSONL text -> samples; `path` only names the source in errors."""
    samples = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataError(f"{path}: line {number}: not valid JSON ({exc.msg} at column {exc.colno}).") from None
        samples.append(sample_from_record(record, f"{path}: line {number}", field_map))
    return _check_unique(samples, str(path))


def _records(rows: Iterable[Mapping[str, Any]], where: str, field_map: Mapping[str, str] | None) -> list[Sample]:
    samples = [sample_from_record(row, f"{where}: row {i + 1}", field_map) for i, row in enumerate(rows)]
    return _check_unique(samples, where)


def load_parquet(path: str | Path, field_map: Mapping[str, str] | None = None) -> list[Sample]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = Path(path)
    _check_file(path, MAX_FILE_BYTES)
    try:
        table = pq.read_table(path)
    except (pa.ArrowInvalid, OSError) as exc:
        raise DataError(f"{path}: not a readable Parquet file ({exc}).") from None
    return _records(table.to_pylist(), str(path), field_map)


def load_hf(name: str, split: str = "train", field_map: Mapping[str, str] | None = None) -> list[Sample]:
    """A Hugging Face data set: a local folder saved with `save_to_disk`, or a hub name
    (only where the hub or its local cache is reachable)."""
    import datasets

    try:
        if Path(name).is_dir():
            data = datasets.load_from_disk(name)
            if isinstance(data, datasets.DatasetDict):
                data = data[split]
        else:
            data = datasets.load_dataset(name, split=split)
    except Exception as exc:  # noqa: BLE001 - the loader's many failure types become one message
        raise DataError(f"Hugging Face data set {name!r} (split {split!r}) could not be loaded: {exc}") from None
    return _records(data, f"{name}[{split}]", field_map)


def load_code_file(path: str | Path, limit: int = MAX_CODE_FILE_BYTES) -> Sample:
    """A single `.cu`/`.py`/`.md` file as one sample whose response is the file's text."""
    path = Path(path)
    text = decode_text(_check_file(path, limit), str(path))
    if not text.strip():
        raise DataError(f"{path}: the file holds only white space.")
    return Sample(id=path.stem, instruction="", response=text, meta={"path": str(path)})


def samples_from_text(text: str, name: str = "pasted") -> list[Sample]:
    """Code pasted into a box: one sample, or a DataError when there is nothing in it."""
    if not text.strip():
        raise DataError(f"{name}: the pasted text is empty.")
    return [Sample(id=name, instruction="", response=text)]


def load_bytes(name: str, raw: bytes, field_map: Mapping[str, str] | None = None) -> list[Sample]:
    """An uploaded file's bytes (the dashboard's uploader), read by its name's suffix."""
    import io

    suffix = Path(name).suffix.lower()
    if not raw:
        raise DataError(f"{name}: the file is empty.")
    if len(raw) > MAX_FILE_BYTES:
        raise DataError(f"{name}: the file is {len(raw) / 1e6:.1f} MB, over the {MAX_FILE_BYTES / 1e6:.0f} MB limit.")
    if suffix in (".jsonl", ".json"):
        return parse_jsonl(decode_text(raw, name), name, field_map)
    if suffix == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            table = pq.read_table(io.BytesIO(raw))
        except (pa.ArrowInvalid, OSError) as exc:
            raise DataError(f"{name}: not a readable Parquet file ({exc}).") from None
        return _records(table.to_pylist(), name, field_map)
    if suffix in CODE_SUFFIXES:
        if len(raw) > MAX_CODE_FILE_BYTES:
            raise DataError(f"{name}: the file is {len(raw) / 1e6:.1f} MB, over the {MAX_CODE_FILE_BYTES / 1e6:.1f} MB limit for one code sample.")
        return samples_from_text(decode_text(raw, name), Path(name).stem)
    raise DataError(f"{name}: unknown file type {suffix!r}; upload .jsonl, .parquet, or a code file (.cu, .py, .md).")


def load(source: str | Path, field_map: Mapping[str, str] | None = None, split: str = "train") -> list[Sample]:
    """Load a data set by name: 'bundled', a .jsonl/.parquet file, a code file, or an HF data set."""
    text = str(source)
    if text == "bundled":
        return load_jsonl(BUNDLED_CORPUS)
    path = Path(text)
    suffix = path.suffix.lower()
    if suffix == ".jsonl" or suffix == ".json":
        return load_jsonl(path, field_map)
    if suffix == ".parquet":
        return load_parquet(path, field_map)
    if suffix in CODE_SUFFIXES:
        return [load_code_file(path)]
    if path.is_dir() or text.startswith("hf:"):
        return load_hf(text.removeprefix("hf:"), split, field_map)
    if path.exists():
        raise DataError(f"{path}: unknown file type {suffix!r}; use .jsonl, .parquet, or a code file (.cu, .py, .md).")
    raise DataError(f"{path}: no such file. Use 'bundled', a .jsonl/.parquet/.cu file, or hf:NAME.")


def fingerprint(samples: list[Sample]) -> str:
    """A short hash of the samples' ids and texts: names a data set's content in the store."""
    digest = hashlib.sha256()
    for sample in samples:
        for part in (sample.id, sample.instruction, sample.response):
            digest.update(part.encode())
            digest.update(b"\x00")
    return digest.hexdigest()[:16]
