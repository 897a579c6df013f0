"""Home: the workspace at a glance (model, data, scoring runs, saved configs)."""

import pandas as pd
import streamlit as st

from cuset.overview import overview

st.title("CuSeT Workbench")
st.caption("CUDA-Sensitive Instruction Tuning: token confidence, sensitive regions, masking and weighting.")
info = overview()
left, middle, right = st.columns(3)
left.metric("Model", info["model"])
middle.metric("Bundled samples", info["bundled_samples"])
right.metric("Scoring runs", len(info["scoring_runs"]))
st.subheader("Data")
st.write(f"Training families: {', '.join(info['train_families']) or 'none'}")
st.write(f"Held out for evaluation: {', '.join(info['held_out_families']) or 'none'}")
st.subheader("Scoring runs")
if info["scoring_runs"]:
    st.dataframe(pd.DataFrame(info["scoring_runs"]), hide_index=True)
else:
    st.info("Nothing scored yet. Score the bundled corpus with `cuset stats bundled`.")
st.subheader("Objective configs")
st.write(", ".join(info["objective_configs"]) or "None saved yet (`cuset objective bundled --save NAME`).")
st.caption(f"Workspace: {info['workspace']} · prepared models: {', '.join(info['prepared_models']) or 'none'}")
