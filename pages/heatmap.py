"""Confidence heatmap: one sample's response coloured token by token, and data-set plots
(drawn only while their expander is open, so the heatmap itself shows quickly)."""

import streamlit as st

from cuset import heatmap, report
from cuset.confidence import token_categories
from cuset.sensitivity import CATEGORIES
from pages.common import current_sample, load_tokenizer, sample_scores, score_rest_button, scored, sidebar

st.title("Confidence heatmap")
if not sidebar():
    st.stop()
index, sample = current_sample()
data, row = sample_scores(index, sample)
scores, tagged = data.scores[row], data.tags[row]
left, middle, right = st.columns(3)
signal = left.radio("Colour by", heatmap.SIGNALS, horizontal=True, key="signal")
outline = middle.toggle("Outline CUDA-sensitive tokens", value=True, key="outline")
category = right.selectbox("Show one category", ["all"] + list(CATEGORIES), key="category",
                           format_func=lambda c: "all categories" if c == "all" else report.category_label(c))
tokenizer = load_tokenizer(st.session_state["model"])
bits, _, _ = token_categories(scores, tagged)
page = heatmap.render(sample.response, scores, bits, signal=signal, outline_sensitive=outline, only_category=None if category == "all" else category,
                      tokenizer=tokenizer, category_names=[report.category_label(c) for c in CATEGORIES], title=sample.id)
if scores.truncated:
    st.warning("This sample was longer than the scoring limit: its tail is not scored.")
for note in tagged.notes:
    st.caption(f"Parser note: {note}")
st.iframe(page, height="content")
st.download_button("Download this view as HTML", page, file_name=f"{sample.id}-heatmap.html", mime="text/html")

plots = st.expander("Data-set plots: confidence of sensitive vs other tokens", key="dataset_plots", on_change="rerun")
if plots.open:
    with plots:
        score_rest_button()
        data, _ = scored()
        if data.table.p.size:
            a, b = st.columns(2)
            a.plotly_chart(report.confidence_distribution(data.table), key="dist")
            b.plotly_chart(report.high_confidence_share(data.table), key="share")
            st.plotly_chart(report.confidence_by_category(data.table), key="bycat")
