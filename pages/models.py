"""Models: the embedded models side by side, and the paper's two findings measured on each
(read from analysis/results/findings/, written by `python -m analysis.findings`)."""

import pandas as pd
import streamlit as st

from cuset import models
from cuset.findings import DEFAULT_RESULTS, model_frames, read_results
from pages.common import sidebar

st.title("Models")
sidebar()
rows = [{"name": spec.name, "model": spec.title, "aliases": ", ".join(spec.aliases), "GGUF MB": round(spec.size / 1e6),
         "wheels": len(spec.pieces), "stored as": spec.storage_dtype, "scored in": spec.score_dtype,
         "prepared": (models.models_dir() / spec.folder / "config.json").is_file(), "note": spec.note}
        for spec in models.EMBEDDED.values()]
st.dataframe(pd.DataFrame(rows), hide_index=True, key="models_table")
st.caption("Any Hugging Face causal LM works too, by local folder or hub id (e.g. Qwen/Qwen2.5-Coder-0.5B-Instruct "
           "where the hub is reachable). `python -m cuset.models NAME` prepares an embedded model.")

st.subheader("The paper's findings by model")
if not (DEFAULT_RESULTS / "findings.json").is_file():
    st.info("No findings measured yet: run `python -m analysis.findings`.")
    st.stop()
result = read_results(DEFAULT_RESULTS)
frames = model_frames(result)
percent = st.column_config.NumberColumn(format="percent")
st.dataframe(frames["summary"], hide_index=True, key="findings_summary",
             column_config={c: percent for c in frames["summary"].columns if "p≥" in c or "regions" in c or "mean" in c}
             | {"p-value": st.column_config.NumberColumn(format="%.4f")})
st.caption("(a) share of tokens with p ≥ 0.5 / 0.9 among CUDA-sensitive vs other tokens; it holds when most sensitive tokens "
           "are confident and at least as often as other tokens. (b) share of low-confidence sensitive tokens in regions "
           f"of two or more tokens, against {result['permutations']} permutations of the same number of low-confidence "
           "positions among each sample's sensitive tokens (one-sided p-value).")
st.markdown("**Share of tokens with p ≥ 0.5, by sensitivity category**")
st.dataframe(frames["categories"], key="findings_categories", column_config={c: percent for c in frames["categories"].columns})
st.markdown("**Low-confidence sensitive regions, by kind**")
st.dataframe(frames["kinds"], key="findings_kinds")
