"""Regions: low-confidence CUDA-sensitive tokens clustered into regions, outlined and listed."""

import pandas as pd
import streamlit as st

from cuset import heatmap, report
from cuset.confidence import token_categories
from cuset.objective import compute
from cuset.regions import region_rows
from cuset.sensitivity import CATEGORIES
from pages.common import (
    current_sample,
    load_tokenizer,
    objective_config,
    sample_scores,
    score_rest_button,
    sidebar,
    threshold_controls,
)

st.title("Regions")
if not sidebar():
    st.stop()
with st.expander("Threshold and clustering", expanded=True):
    threshold_controls(st, columns=5)
index, sample = current_sample()
data, row = sample_scores(index, sample)
result = compute(data.table, objective_config())
scores, tagged = data.scores[row], data.tags[row]
rows = heatmap.snap_rows(region_rows(result.regions, [s.response for s in data.samples], [s.id for s in data.samples], only_sample=row),
                         sample.response, scores.starts, scores.ends)
st.subheader(f"{len(rows)} regions in {sample.id}")
selected: list[int] = []
if rows:
    table = pd.DataFrame(rows)[["kind", "lines", "size", "mean_p", "text"]].rename(columns={"mean_p": "mean confidence"})
    event = st.dataframe(table, on_select="rerun", selection_mode="single-row", hide_index=True, key="region_table",
                         column_config={"mean confidence": st.column_config.NumberColumn(format="%.3f")})
    selected = list(event.selection.rows)
else:
    st.info("No low-confidence sensitive regions in this sample at this threshold. Raise the quantile or tau.")
shown = [rows[i] for i in selected] if selected else rows
marks = [heatmap.RegionMark(r["tokens"][0], r["tokens"][1], r["kind"]) for r in shown]
if selected:
    st.caption(f"Showing the selected region ({shown[0]['kind']}, lines {shown[0]['lines']}); clear the selection to show all.")
bits, _, _ = token_categories(scores, tagged)
tokenizer = load_tokenizer(st.session_state["model"])
page = heatmap.render(sample.response, scores, bits, outline_sensitive=False, regions=marks, title=f"{sample.id}: regions", tokenizer=tokenizer,
                      category_names=[report.category_label(c) for c in CATEGORIES])
st.iframe(page, height="content")

st.header("Data set")
score_rest_button()  # scoring more reruns the page, so `result` already covers every scored sample
st.metric("Regions in the scored samples", len(result.regions))
st.plotly_chart(report.regions_by_kind(result.regions.kind), key="kinds")
