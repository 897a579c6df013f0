"""What every page shares: the sidebar (model and data set), cached library loaders, and the
current sample. Only widgets and caching live here; the work is done by `cuset`."""

from __future__ import annotations

import itertools
import os
from dataclasses import replace
from typing import Any

import pandas as pd
import streamlit as st

from cuset import models
from cuset.confidence import ScoreConfig, ScoredDataset, record_run, score_samples, scored_from_cache
from cuset.data import DataError, Sample, fingerprint, load, load_bytes, samples_from_text
from cuset.objective import MASK_POLICIES, THRESHOLD_MODES, ObjectiveConfig
from cuset.overview import model_choices, scoring_stamp, workspace_stamp
from cuset.regions import REGION_KINDS, REGION_METHODS, RegionConfig

OTHER_MODEL = "another model (folder or hub id)"
UPLOAD_TYPES = ["jsonl", "json", "parquet", "cu", "cuh", "py", "md", "txt"]


@st.cache_resource(show_spinner="Preparing the model...", max_entries=4)
def load_tokenizer(name: str) -> Any:
    """The model's tokenizer (preparing an embedded model on first use). Pages need no weights
    to show cached scores: scoring loads them, in the model's own dtype, when it runs."""
    return models.load_tokenizer(name)[0]


@st.cache_resource(show_spinner=False, max_entries=1)
def bundled() -> list[Sample]:
    return load("bundled")


@st.cache_resource(show_spinner="Reading cached scores...", max_entries=4)
def _scored(model: str, data_key: str, generation: tuple, _samples: tuple[Sample, ...]) -> tuple[ScoredDataset, list[int]]:
    return scored_from_cache(list(_samples), ScoreConfig(model=model))


def scored() -> tuple[ScoredDataset, list[int]]:
    """The scored part of the current data set (cached scores only; no model run). Keyed by
    the workspace's scoring stamp: a sample scored by any session or background job (which
    records a scoring run) is read on the next rerun, and nothing is re-read otherwise."""
    samples = st.session_state["samples"]
    return _scored(st.session_state["model"], fingerprint(samples), scoring_stamp(), tuple(samples))


def follow(page: str, what: str = "all", every: float = 2.0) -> None:
    """Rerun the page when the workspace changes (`what`: 'all', 'jobs', 'results' or
    'scoring'; see cuset.overview.workspace_stamp): background work shows without a reload,
    and nothing is redrawn while nothing happens. Call it once, early in the page."""
    key = f"_stamp_{page}"
    st.session_state[key] = _stamp(what)

    @st.fragment(run_every=every)
    def watch() -> None:
        if _stamp(what) != st.session_state.get(key):
            st.rerun()

    watch()


def _stamp(what: str) -> tuple:
    stamp = workspace_stamp()
    parts = {"jobs": stamp[0], "scoring": stamp[1], "results": stamp[2]}
    return stamp if what == "all" else tuple(parts[w] for w in what.split("+"))


def score(samples: list[Sample], label: str) -> None:
    """Score samples with a visible progress bar; results land in the on-disk cache."""
    bar = st.progress(0.0, text=label)

    def progress(done: int, total: int) -> None:
        bar.progress(done / max(total, 1), text=f"{label}: {done}/{total} samples")

    _, stats = score_samples(samples, ScoreConfig(model=st.session_state["model"]), progress)
    record_run(samples, stats, st.session_state["source"])  # a new scoring run: scored() re-reads
    bar.empty()


def _set_data(samples: list[Sample], source: str) -> None:
    st.session_state["samples"] = samples
    st.session_state["source"] = source
    st.session_state["sample_index"] = 0


def _load_first(start: str, label: str) -> None:
    """The start-up data set: the bundled corpus, or the file named by $CUSET_DATA."""
    try:
        _set_data(bundled() if start == "bundled" else load(start), label)
    except DataError as exc:
        st.error(f"$CUSET_DATA: {exc}")
        _set_data(bundled(), label)


def sidebar() -> bool:
    """Model and data set choice; returns False (after showing why) when nothing usable is loaded."""
    state = st.session_state
    state.setdefault("model", models.model_name())
    start = os.environ.get("CUSET_DATA", "bundled")
    first = "Bundled corpus" if start == "bundled" else f"{os.path.basename(start)} ($CUSET_DATA)"
    if "samples" not in state:
        _load_first(start, first)
    with st.sidebar:
        st.subheader("Model")
        choices = model_choices(state["model"]) + [OTHER_MODEL]
        name = st.selectbox("Model", choices, index=choices.index(state["model"]), key="model_input",
                            help="coder-0.5b (Qwen2.5-Coder-0.5B, the default), coder-1.5b, smollm2-135m (small and fast), "
                                 "tiny (random, for tests); or another model: a local folder or a hub id")
        if name == OTHER_MODEL:
            name = st.text_input("Folder or hub id", key="model_other", placeholder="e.g. /models/my-finetune or Qwen/Qwen2.5-Coder-7B-Instruct")
        if name.strip() and name.strip() != state["model"]:
            try:
                load_tokenizer(name.strip())
                state["model"] = name.strip()
            except models.ModelError as exc:
                st.error(str(exc))
        st.subheader("Data")
        kind = st.radio("Source", [first, "Upload a file", "Paste code"], key="data_kind")
        if kind == first and state["source"] != first:
            _load_first(start, first)
        elif kind == "Upload a file":
            upload = st.file_uploader("JSONL, Parquet or a code file", type=UPLOAD_TYPES, key="upload")
            if upload is not None and state["source"] != f"upload:{upload.name}:{upload.size}":
                try:
                    _set_data(load_bytes(upload.name, upload.getvalue()), f"upload:{upload.name}:{upload.size}")
                except DataError as exc:
                    st.error(str(exc))
        elif kind == "Paste code":
            text = st.text_area("CUDA, markdown or a load_inline solution", height=160, key="paste")
            if st.button("Use pasted code", key="use_paste"):
                try:
                    _set_data(samples_from_text(text), "pasted code")
                except DataError as exc:
                    st.error(str(exc))
        source = state["source"].split(":")[1] if state["source"].startswith("upload:") else state["source"]
        st.caption(f"Loaded: {len(state['samples'])} samples from {source}; model {state['model']}")
    try:
        load_tokenizer(state["model"])
    except models.ModelError as exc:
        st.error(str(exc))
        return False
    return True


def current_sample() -> tuple[int, Sample]:
    """Sample navigation (search, previous/next); returns the current index and sample."""
    samples: list[Sample] = st.session_state["samples"]
    state = st.session_state
    index = min(state.get("sample_index", 0), len(samples) - 1)
    query = st.text_input("Find a sample by id or text", key="sample_query", placeholder="e.g. softmax, atomicAdd, reduction-sum")
    matches = [i for i, s in enumerate(samples) if not query or query.lower() in s.id.lower() or query in s.response]
    if not matches:
        st.info(f"No sample matches {query!r}.")
        st.stop()
    if index not in matches:
        index = matches[0]
    prev_col, pick_col, next_col = st.columns([1, 6, 1])
    position = matches.index(index)
    if prev_col.button("Previous", disabled=position == 0, use_container_width=True):
        position -= 1
    if next_col.button("Next", disabled=position == len(matches) - 1, use_container_width=True):
        position += 1
    choice = pick_col.selectbox("Sample", matches, index=position, format_func=lambda i: f"{i + 1}/{len(samples)}  {samples[i].id}", label_visibility="collapsed")
    state["sample_index"] = choice
    return choice, samples[choice]


def sample_scores(index: int, sample: Sample) -> tuple[ScoredDataset, int]:
    """The scored data set and the current sample's position in it, scoring it first if needed."""
    data, indices = scored()
    if index not in indices:
        score([sample], f"Scoring {sample.id}")
        data, indices = scored()
    return data, indices.index(index)


def score_rest_button() -> None:
    """Data-set figures use the scored samples; this scores the rest, with progress."""
    samples = st.session_state["samples"]
    data, indices = scored()
    missing = [s for i, s in enumerate(samples) if i not in set(indices)]
    st.caption(f"{len(indices)} of {len(samples)} samples scored under {st.session_state['model']}.")
    if missing:
        batch = missing[:20]
        if st.button(f"Score {len(batch)} more samples", key="score_more"):
            score(batch, "Scoring")
            st.rerun()


def objective_config() -> ObjectiveConfig:
    """The objective config the pages share (set by the tuning and regions controls)."""
    return st.session_state.setdefault("objective", ObjectiveConfig())


def threshold_controls(where: Any, columns: int = 1) -> None:
    """Threshold and region-clustering controls, written back into the shared config; with
    `columns` > 1 they are laid out side by side."""
    c = objective_config()
    cells = where.columns(columns) if columns > 1 else [where]
    slot = itertools.cycle(cells)
    mode = next(slot).radio("Low confidence means", THRESHOLD_MODES, index=THRESHOLD_MODES.index(c.threshold_mode), horizontal=True, key="threshold_mode",
                       format_func=lambda m: "below the sample's quantile" if m == "quantile" else "p below tau")
    quantile, tau = c.quantile, c.tau
    if mode == "quantile":
        quantile = next(slot).slider("Quantile q", 0.01, 0.99, c.quantile, 0.01, key="quantile")
    else:
        tau = next(slot).slider("Threshold tau", 0.01, 1.0, c.tau, 0.01, key="tau")
    method = next(slot).selectbox("Region clustering", REGION_METHODS, index=REGION_METHODS.index(c.regions.method), key="region_method",
                             help="gap: single-linkage over positions; statement: by enclosing statement; dbscan: scikit-learn DBSCAN")
    max_gap = next(slot).slider("Max gap between region tokens", 0, 12, c.regions.max_gap, key="max_gap")
    min_size = next(slot).slider("Min tokens per region", 1, 10, c.regions.min_size, key="min_size")
    min_samples = next(slot).slider("DBSCAN min samples", 1, 6, c.regions.min_samples, key="min_samples") if method == "dbscan" else c.regions.min_samples
    regions = RegionConfig(method=method, max_gap=max_gap, min_size=min_size, min_samples=min_samples)
    st.session_state["objective"] = replace(c, threshold_mode=mode, quantile=quantile, tau=tau, regions=regions)


def weight_controls(where: Any) -> None:
    """Mask policy, per-kind region weights and the reweighting strength."""
    c = objective_config()
    policy = where.selectbox("Mask policy", MASK_POLICIES, index=MASK_POLICIES.index(c.policy), key="policy",
                             help="protect_regions: mask low-confidence tokens outside regions; protect_sensitive: mask low-confidence non-sensitive tokens; none")
    alpha = where.slider("alpha (reweighting strength)", 0.0, 5.0, c.alpha, 0.1, key="alpha")
    w_min, w_max = where.slider("Weight clip [w_min, w_max]", 0.05, 10.0, (c.w_min, c.w_max), 0.05, key="wclip")
    with where.expander("Region weights kappa, per kind"):
        kappa = {kind: st.slider(kind, 0.0, 5.0, float(c.kappa.get(kind, 1.0)), 0.1, key=f"kappa_{kind}") for kind in REGION_KINDS}
    try:
        st.session_state["objective"] = replace(c, policy=policy, alpha=alpha, w_min=min(w_min, 1.0), w_max=max(w_max, 1.0), kappa={k: v for k, v in kappa.items() if v != 1.0})
    except ValueError as exc:
        where.error(str(exc))


def job_table(rows: list[dict[str, Any]], key: str) -> Any:
    """A table of cuset.overview.job_rows (one kind of job): progress as a bar, empty columns
    left out."""
    frame = pd.DataFrame(rows)
    frame = frame[[c for c in frame.columns if c in ("id", "status") or frame[c].astype(str).str.len().gt(0).any()]]
    return st.dataframe(frame, hide_index=True, key=key,
                        column_config={"progress": st.column_config.ProgressColumn(min_value=0.0, max_value=1.0, format="percent"),
                                       "id": st.column_config.NumberColumn("job", format="%d")})
