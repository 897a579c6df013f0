"""Home: the workspace at a glance (model, data, what is scored, saved configs)."""

import pandas as pd
import streamlit as st

from cuset.overview import overview
from pages.common import scored, sidebar

st.title("CuSeT Workbench")
st.caption("CUDA-Sensitive Instruction Tuning: token confidence, sensitive regions, masking and weighting.")
ready = sidebar()
info = overview()
samples = st.session_state["samples"]
n_scored = len(scored()[1]) if ready else 0
a, b, c, d = st.columns(4)
a.metric("Model", st.session_state["model"])
b.metric("Samples loaded", len(samples))
c.metric("Scored under this model", f"{n_scored} / {len(samples)}")
d.metric("Saved objective configs", len(info["objective_configs"]))
st.subheader("Data")
st.write(f"Bundled corpus: {info['bundled_samples']} samples. Training families: {', '.join(info['train_families']) or 'none'}.")
st.write(f"Held out for evaluation: {', '.join(info['held_out_families']) or 'none'}.")
st.subheader("Recent scoring runs")
if info["scoring_runs"]:
    st.dataframe(pd.DataFrame(info["scoring_runs"]), hide_index=True)
else:
    st.info("Nothing scored yet: open the Confidence heatmap page, or run `cuset stats bundled`.")
st.subheader("Objective configs")
st.write(", ".join(info["objective_configs"]) or "None saved yet: save one on the Threshold and weights page.")
st.subheader("Fine-tuning jobs")
if info["jobs"]:
    st.dataframe(pd.DataFrame(info["jobs"]), hide_index=True)
else:
    st.info("No fine-tunes yet: start one on the Fine-tunes page or with `cuset train --detach`.")
st.caption(f"Workspace: {info['workspace']} · prepared models: {', '.join(info['prepared_models']) or 'none'}")
