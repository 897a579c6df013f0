"""Home: the workspace at a glance (model, data, what is scored, saved configs, jobs by kind).
It follows background work: a job's progress or a scoring run shows without a reload."""

import pandas as pd
import streamlit as st

from cuset.overview import JOB_KINDS, overview
from pages.common import follow, job_table, scored, sidebar

st.title("CuSeT Workbench")
st.caption("CUDA-Sensitive Instruction Tuning: token confidence, sensitive regions, masking and weighting.")
ready = sidebar()
follow("home")
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
    columns = ["created", "dataset", "model", "n_samples", "n_tokens", "n_truncated", "cache_hits", "seconds"]
    st.dataframe(pd.DataFrame(info["scoring_runs"])[columns], hide_index=True, key="home_scoring",
                 column_config={"seconds": st.column_config.NumberColumn(format="%.1f")})
else:
    st.info("Nothing scored yet: open the Confidence heatmap page, or run `cuset stats bundled`.")
st.subheader("Objective configs")
st.write(", ".join(info["objective_configs"]) or "None saved yet: save one on the Threshold and weights page.")
empty = {
    "train": "No fine-tunes yet: start one on the Fine-tunes page or with `cuset train --detach`.",
    "eval": "No evaluations yet: start one on the Results page or with `cuset eval`.",
    "figures": "No figures jobs yet: regenerate the figures on the Figures page.",
}
for kind, title in JOB_KINDS.items():
    st.subheader(title)
    if info["jobs"][kind]:
        job_table(info["jobs"][kind], key=f"home_jobs_{kind}")
    else:
        st.caption(empty[kind])
st.caption(f"Workspace: {info['workspace']} · prepared models: {', '.join(info['prepared_models']) or 'none'}")
