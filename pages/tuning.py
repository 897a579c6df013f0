"""Threshold and weight tuning: live data-set figures as the objective's knobs move."""

from dataclasses import replace

import numpy as np
import pandas as pd
import streamlit as st

from cuset import heatmap, report
from cuset.confidence import token_categories
from cuset.objective import MASK_SCOPES, METHODS, compute, list_named, load_named, masked_counts, save_named
from cuset.selection import BY, selection_jsonl, selection_rows
from cuset.sensitivity import CATEGORIES
from pages.common import (
    current_sample,
    load_tokenizer,
    objective_config,
    sample_scores,
    score_rest_button,
    scored,
    sidebar,
    threshold_controls,
    weight_controls,
)

WIDGET_KEYS = ("threshold_mode", "quantile", "tau", "region_method", "max_gap", "min_size", "min_samples", "policy", "alpha", "wclip",
               "mask_scope", "floor", "sft_warmup_steps", "sft_warmup_fraction")
SCOPE_LABELS = {"all": "any token", "cuda": "only CUDA source"}

st.title("Threshold and weights")
if not sidebar():
    st.stop()
data, _ = scored()
if not data.table.p.size:
    st.info("Nothing is scored yet under this model: score some samples first.")
    score_rest_button()
    st.stop()
controls, figures = st.columns([1, 2])
with controls:
    method = st.selectbox("Method", METHODS, index=METHODS.index("cuset"), key="method")
    threshold_controls(st)
    weight_controls(st)
    with st.expander("Letting the objective learn what the base model lacks", expanded=True):
        c = objective_config()
        scope = st.radio("The mask may drop", MASK_SCOPES, index=MASK_SCOPES.index(c.mask_scope), horizontal=True, key="mask_scope",
                         format_func=SCOPE_LABELS.get, help="only CUDA source: the Python wrapper around it (the load_inline scaffold), prose and fences are always trained")
        floor = st.slider("Floor: weight a masked token keeps", 0.0, 1.0, c.floor, 0.01, key="floor", help="loss uses max(m, eps): 0 = masked tokens get no gradient")
        steps = st.number_input("Plain-SFT warm-up, optimizer steps", min_value=0, value=c.sft_warmup_steps, step=1, key="sft_warmup_steps")
        fraction = st.number_input("... or as a fraction of the run", min_value=0.0, max_value=0.99, value=c.sft_warmup_fraction, step=0.05, key="sft_warmup_fraction",
                                   help="resolved against the run's optimizer steps when training starts; set this or the steps, not both")
        try:
            st.session_state["objective"] = replace(c, mask_scope=scope, floor=floor, sft_warmup_steps=int(steps), sft_warmup_fraction=fraction)
        except ValueError as exc:
            st.error(str(exc))
config = objective_config()
result = compute(data.table, config, method)
s = result.stats
with figures:
    a, e, b, c, d = st.columns(5)
    a.metric("Masked tokens", f"{s['masked_fraction']:.1%}")
    e.metric("Masked outside CUDA", f"{s['masked_fraction_outside_cuda']:.1%}",
             help="Of the tokens outside the CUDA source (the Python wrapper, prose, fences), the share the mask drops")
    e.caption(f"{s['masked_outside_cuda_share']:.0%} of the masked tokens")
    kept = s["low_sensitive_preserved"] / max(s["low_sensitive_tokens"], 1)
    b.metric("Sensitive kept", f"{kept:.0%}", help=f"Low-confidence CUDA-sensitive tokens the mask keeps: {s['low_sensitive_preserved']:,} of {s['low_sensitive_tokens']:,}")
    b.caption(f"{s['low_sensitive_preserved']:,} of {s['low_sensitive_tokens']:,} tokens")
    c.metric("Regions", f"{s['n_regions']:,}")
    d.metric("Effective sample size", f"{s['effective_sample_size']:.1f}", help="Kish effective sample size of the weights")
    d.caption(f"of {s['n_samples']:,} samples")
    st.plotly_chart(report.masked_by_category(s), key="masked")
    st.plotly_chart(report.weight_histogram(result.weights, s["effective_sample_size"]), key="weights")
    order = np.argsort(-result.weights)[:10]
    st.subheader("Largest sample weights")
    st.dataframe(pd.DataFrame({"sample": [data.samples[i].id for i in order], "weight": result.weights[order], "region score": result.r[order]}), hide_index=True)
    with st.expander("Data selection: train on the samples the regions point to"):
        top = st.number_input("Keep the top (a fraction, or a count above 1)", min_value=0.01, value=0.5, step=0.05, key="select_top")
        by = st.radio("Rank by", BY, horizontal=True, key="select_by")
        ranked = result if method == "cuset" else compute(data.table, config, "cuset")
        try:
            rows = selection_rows(data.samples, ranked.r, ranked.weights, top, by, st.session_state["model"])
        except ValueError as exc:
            st.error(str(exc))
        else:
            st.caption(f"{len(rows)} of {len(data.samples)} scored samples, by {by.replace('_', ' ')} under the settings above")
            st.dataframe(pd.DataFrame([{k: r[k] for k in ("rank", "id", "region_score", "weight")} for r in rows]), hide_index=True, key="selection")
            st.download_button("Download the selection (JSONL, trainable data)", selection_jsonl(rows), file_name=f"selection-{by}-{top:g}.jsonl",
                               mime="application/jsonl", key="select_download")
    score_rest_button()

st.header("Preview: masked tokens struck through")
index, sample = current_sample()
scored_before = data
data, row = sample_scores(index, sample)
if data is not scored_before:  # the current sample was just scored: the figures above predate it
    result = compute(data.table, config, method)
lo, hi = int(data.table.offsets[row]), int(data.table.offsets[row + 1])
scores, tagged = data.scores[row], data.tags[row]
bits, _, _ = token_categories(scores, tagged)
tokenizer = load_tokenizer(st.session_state["model"])
page = heatmap.render(sample.response, scores, bits, outline_sensitive=True, masked=result.mask[lo:hi] == 0, title=f"{sample.id}: weight {result.weights[row]:.2f}",
                      tokenizer=tokenizer, category_names=[report.category_label(c) for c in CATEGORIES])
counts = masked_counts(result.mask[lo:hi], data.table.in_cuda[lo:hi])
notes = [f"{counts['n_masked']:,} of {counts['n_tokens']:,} tokens of this sample masked, {counts['n_masked_outside_cuda']:,} of them "
         f"outside the CUDA source ({counts['n_outside_cuda']:,} tokens there)"]
if config.floor > 0 and method in ("token-mask", "cuset"):
    notes.append(f"masked tokens still train at weight {config.floor:g}")
if config.sft_warmup_steps or config.sft_warmup_fraction:
    start = f"{config.sft_warmup_steps} optimizer steps" if config.sft_warmup_steps else f"{config.sft_warmup_fraction:.0%} of the run"
    notes.append(f"plain SFT for the first {start}, this mask after")
st.caption("; ".join(notes) + ".")
st.iframe(page, height="content")

st.header("Saved configs")
save_col, load_col = st.columns(2)
name = save_col.text_input("Save the current settings as", key="config_name", placeholder="e.g. q25-protect-regions")
if save_col.button("Save config", key="save_config"):
    try:
        path = save_named(name.strip(), config)
        save_col.success(f"Saved {name.strip()!r} to {path}")
    except ValueError as exc:
        save_col.error(str(exc))
saved = list_named()
pick = load_col.selectbox("Load a saved config", saved, index=None, key="config_pick", placeholder="none saved" if not saved else "choose")
if load_col.button("Load config", key="load_config", disabled=pick is None):
    st.session_state["objective"] = load_named(pick)
    for key in WIDGET_KEYS + tuple(k for k in st.session_state if str(k).startswith("kappa_")):
        st.session_state.pop(key, None)
    st.rerun()
