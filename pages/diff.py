"""Confidence diff: what a second model (a fine-tune, a bigger model) changed token by token
against the sidebar's model, on the current sample, and over the samples both have scored."""

import pandas as pd
import streamlit as st

from cuset import heatmap, jobs, models, report
from cuset.confidence import ScoreConfig, TokenTable, score_samples, scored_from_cache, token_categories
from cuset.diff import TokenizerMismatch, diff_table, sample_diff, score_config, summarise_diff
from cuset.objective import compute
from cuset.overview import model_choices
from cuset.sensitivity import CATEGORIES
from pages.common import current_sample, objective_config, sample_scores, sidebar

OTHER = "another model (folder, hub id or job:ID)"


@st.cache_resource(show_spinner=False, max_entries=8)
def _scores_b(spec: str, sample_id: str, key: tuple, _sample: object) -> object:
    return score_samples([_sample], score_config(spec))[0][0]


@st.cache_resource(show_spinner="Reading both models' cached scores...", max_entries=2)
def _dataset(model_a: str, model_b: str, key: tuple, _samples: tuple) -> tuple:
    a, ia = scored_from_cache(list(_samples), ScoreConfig(model=model_a))
    b, ib = scored_from_cache(list(_samples), score_config(model_b))
    both = sorted(set(ia) & set(ib))
    pick_a = [ia.index(i) for i in both]
    pick_b = [ib.index(i) for i in both]
    return [a.samples[k] for k in pick_a], [a.scores[k] for k in pick_a], [a.tags[k] for k in pick_a], [b.scores[k] for k in pick_b]


st.title("Confidence diff")
if not sidebar():
    st.stop()
model_a = st.session_state["model"]
finetunes = [f"job:{j.id}" for j in jobs.JobStore().list(statuses=("completed",), kinds=("train",))]
choices = [m for m in model_choices() if m != model_a] + finetunes + [OTHER]
pick = st.selectbox(f"Compare {model_a} (A) with (B)", choices, key="diff_b",
                    help="B minus A, per token. Both need one tokenizer: a fine-tune (job:ID) and its base, or coder-0.5b and coder-1.5b.")
model_b = st.text_input("Folder, hub id or job:ID", key="diff_b_other").strip() if pick == OTHER else pick
if not model_b:
    st.info("Name the second model.")
    st.stop()
index, sample = current_sample()
data, row = sample_scores(index, sample)
scores_a, tagged = data.scores[row], data.tags[row]
try:
    with st.spinner(f"Scoring {sample.id} under {model_b}..."):
        scores_b = _scores_b(model_b, sample.id, (sample.instruction, sample.response), sample)
    delta, notes = sample_diff(scores_a, scores_b, model_a, model_b)
except (TokenizerMismatch, models.ModelError, ValueError) as exc:
    st.error(str(exc))
    st.stop()
bits, _, _ = token_categories(scores_a, tagged)
result = compute(TokenTable.build([scores_a], [tagged]), objective_config())
marks = [heatmap.RegionMark(int(a), int(b), k) for a, b, k in zip(result.regions.tok_start, result.regions.tok_end, result.regions.kind_names())]
tokenizer, _ = models.load_tokenizer(model_a)
page = heatmap.render(sample.response, scores_a, bits, delta=delta, delta_label=f"Δ log p ({model_b} − {model_a})", notes=notes,
                      regions=marks, tokenizer=tokenizer, category_names=[report.category_label(c) for c in CATEGORIES],
                      title=f"{sample.id}: {model_b} − {model_a}")
gained = float((delta > 0).mean()) if delta.size else 0.0
st.caption(f"Mean Δ log p {delta.mean():+.3f} nats over {delta.size} tokens; {gained:.0%} of them gained. Teal: {model_b} is surer of the "
           f"gold token, brown: less sure; outlined: the low-confidence sensitive regions found on {model_a}'s scores. Hover for both models' values.")
st.iframe(page, height="content")
st.download_button("Download this view as HTML", page, file_name=f"{sample.id}-diff.html", mime="text/html", key="diff_html")

view = st.expander("Data-set view: the samples both models have scored", key="diff_dataset", on_change="rerun")
if view.open:
    with view:
        samples = tuple(st.session_state["samples"])
        kept, sa, tags, sb = _dataset(model_a, model_b, (len(samples), st.session_state["source"]), samples)
        st.caption(f"{len(kept)} of {len(samples)} samples are scored under both models (score more: "
                   f"`cuset diff DATA --model {model_a} --against {model_b}`).")
        if kept:
            try:
                diff = diff_table(sa, sb, tags, model_a, model_b)
            except TokenizerMismatch as exc:
                st.error(str(exc))
                st.stop()
            summary = summarise_diff(diff, [s.response for s in kept], [s.id for s in kept], objective_config())
            pm = summary["preserved_vs_masked"]
            a, b, c = st.columns(3)
            a.metric("Preserved regions: mean Δ log p", f"{pm['preserved_mean_delta_logp']:+.3f}")
            b.metric("Masked tokens: mean Δ log p", f"{pm['masked_mean_delta_logp']:+.3f}")
            c.metric("Difference (95% bootstrap)", f"{pm['difference']:+.3f}", help=f"[{pm['interval'][0]:+.3f}, {pm['interval'][1]:+.3f}], resampling samples")
            st.dataframe(pd.DataFrame(summary["by_category"]), hide_index=True, key="diff_bycat")
            left, right = st.columns(2)
            left.dataframe(pd.DataFrame(summary["top_gained_tokens"]), hide_index=True, key="diff_gained")
            right.dataframe(pd.DataFrame(summary["top_lost_tokens"]), hide_index=True, key="diff_lost")
            regions = pd.DataFrame(summary["regions"]["top_gained"] + summary["regions"]["top_lost"])
            if not regions.empty:
                st.dataframe(regions[["sample", "kind", "lines", "size", "mean_p", "mean_delta_logp", "text"]], hide_index=True, key="diff_regions")
