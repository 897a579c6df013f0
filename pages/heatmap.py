"""Confidence heatmap: one sample's response coloured token by token, and data-set plots."""

import streamlit as st

from cuset import heatmap, report
from cuset.confidence import token_categories
from cuset.sensitivity import CATEGORIES
from pages.common import current_sample, load_model, sample_scores, score_rest_button, scored, sidebar

st.title("Confidence heatmap")
if not sidebar():
    st.stop()
index, sample = current_sample()
data, row = sample_scores(index, sample)
scores, tagged = data.scores[row], data.tags[row]
left, middle, right = st.columns(3)
signal = left.radio("Colour by", heatmap.SIGNALS, horizontal=True, key="signal")
outline = middle.toggle("Outline CUDA-sensitive tokens", value=True, key="outline")
category = right.selectbox("Show one category", ["all"] + list(CATEGORIES), key="category")
_, tokenizer, _ = load_model(st.session_state["model"])
bits, _, _ = token_categories(scores, tagged)
names = [tokenizer.convert_ids_to_tokens([int(t) for t in ids]) for ids in scores.topk_ids]
page = heatmap.render(sample.response, scores, bits, signal=signal, outline_sensitive=outline, only_category=None if category == "all" else category, top_names=names, title=sample.id)
if scores.truncated:
    st.warning("This sample was longer than the scoring limit: its tail is not scored.")
for note in tagged.notes:
    st.caption(f"Parser note: {note}")
st.iframe(page, height="content")
st.download_button("Download this view as HTML", page, file_name=f"{sample.id}-heatmap.html", mime="text/html")

with st.expander("Data-set plots: confidence of sensitive vs other tokens", expanded=False):
    score_rest_button()
    data, _ = scored()
    if data.table.p.size:
        a, b = st.columns(2)
        a.plotly_chart(report.confidence_distribution(data.table), key="dist")
        b.plotly_chart(report.high_confidence_share(data.table), key="share")
        st.plotly_chart(report.confidence_by_category(data.table), key="bycat")
