"""Results: did the fine-tuned models write kernels that compute the right answer?"""

import pandas as pd
import streamlit as st

from cuset import jobs, models, report
from cuset.evaluate.evaluation import EvalConfig, submit_evaluation
from cuset.evaluate.evidence import candidate_heatmap
from cuset.evaluate.metrics import compare_runs, pass_at_k_table, summarise
from cuset.evaluate.results import ResultStore, results_csv

st.title("Results")
jobs.reconcile()
store = ResultStore()

with st.form("start_eval"):
    st.subheader("Evaluate")
    finetunes = [j for j in jobs.list_jobs() if j.kind == "train" and j.status == "completed"]
    sources = ["the suite's reference solutions (sanity check)", "the base model"] + [f"job {j.id}: {j.method} ({j.preset})" for j in finetunes]
    a, b, c, d = st.columns([3, 1, 1, 1])
    source = a.selectbox("Candidates from", sources, index=min(2, len(sources) - 1), key="ev_source")
    levels = b.multiselect("Levels", [1, 2, 3], key="ev_levels")
    split = c.selectbox("Split", ["both", "in_distribution", "held_out"], key="ev_split")
    limit = d.number_input("First N tasks (0 = all)", min_value=0, value=0, key="ev_limit")
    if st.form_submit_button("Start evaluation"):
        fields = {"levels": levels, "split": "" if split == "both" else split, "limit": int(limit)}
        if source.startswith("the suite"):
            fields["solutions"] = "reference"
        elif source.startswith("job "):
            fields["model"] = f"job:{source.split(':')[0].split()[1]}"
        try:
            job = submit_evaluation(EvalConfig(**fields))
            st.success(f"Started evaluation job {job.id}: it shows below while it runs.")
        except (ValueError, jobs.JobError) as exc:
            st.error(str(exc))


@st.fragment(run_every=3)
def running() -> None:
    active = [j for j in jobs.list_jobs() if j.kind == "eval" and not j.is_final]
    if active:
        st.dataframe(pd.DataFrame([{"job": j.id, "status": j.status, "phase": j.phase, "progress": j.progress,
                                    "step": f"{j.step}/{j.total_steps}", "ETA (s)": j.eta_s} for j in active]),
                     hide_index=True, key="ev_jobs", column_config={"progress": st.column_config.ProgressColumn(min_value=0.0, max_value=1.0)})


running()

runs = store.runs()
if runs.empty:
    st.info("No evaluation runs yet: start one above, or run `cuset eval --solutions reference --limit 5`.")
    st.stop()
st.subheader("Runs")
st.dataframe(runs[["id", "label", "method", "model", "backend", "status", "candidates", "compile_rate", "correct_rate"]],
             hide_index=True, key="ev_runs", column_config={"compile_rate": st.column_config.NumberColumn(format="%.2f"),
                                                          "correct_rate": st.column_config.NumberColumn(format="%.2f")})
ids = runs["id"].tolist()
chosen = st.multiselect("Runs to show side by side", ids, default=ids[: min(3, len(ids))],
                        format_func=lambda i: f"{i}: {runs.set_index('id').loc[i, 'label']}", key="ev_chosen")
frame = store.frame(chosen)
if frame.empty:
    st.info("The chosen runs have no results yet.")
    st.stop()
frame["run"] = frame["run_id"].astype(str) + ": " + frame["label"]
group = st.radio("Group by", ["run", "method"], horizontal=True, key="ev_group")
left, right = st.columns(2)
left.plotly_chart(report.correctness_by(frame, "level", group=group), key="by_level")
right.plotly_chart(report.correctness_by(frame, "split", group=group), key="by_split")
st.plotly_chart(report.correctness_by(frame, "family", group=group), key="by_family")
left, right = st.columns(2)
left.plotly_chart(report.correctness_by(frame, "level", group=group, metric="compiled"), key="compiled_by_level")
right.plotly_chart(report.status_breakdown(frame, group=group), key="status")
if frame.groupby(["run_id", "task_id"]).size().min() > 1:
    st.plotly_chart(report.pass_at_k_curves(frame, group=group), key="passk")
table = summarise(frame, by=[group, "level"])
st.dataframe(table, hide_index=True, key="ev_summary")
ks = [k for k in (1, 5, 10) if k <= int(frame.groupby(["run_id", "task_id"]).size().min())]
st.dataframe(pass_at_k_table(frame, ks=ks, by=[group]), hide_index=True, key="ev_passk")
st.download_button("Download these results as CSV", results_csv(frame), file_name="cuset-results.csv", mime="text/csv", key="ev_csv")

if len(chosen) >= 2:
    st.subheader("Compare two runs task by task")
    a, b = st.columns(2)
    run_a = a.selectbox("Run A", chosen, index=0, key="ev_a")
    run_b = b.selectbox("Run B", chosen, index=1, key="ev_b")
    diff = compare_runs(frame, run_a, run_b)
    counts = diff["change"].value_counts()
    st.caption(f"fixed in B: {counts.get('fixed', 0)}, broken in B: {counts.get('broken', 0)}, unchanged: {counts.get('same', 0)}")
    st.dataframe(diff, hide_index=True, key="ev_diff")

st.subheader("One candidate")
a, b, c = st.columns([1, 2, 1])
run_pick = a.selectbox("Run", chosen, key="ev_run_pick")
rows = frame[frame["run_id"] == run_pick]
task_pick = b.selectbox("Task", sorted(rows["task_id"].unique()), key="ev_task_pick")
samples = rows[rows["task_id"] == task_pick]
sample_pick = c.selectbox("Sample", samples["sample"].tolist(), key="ev_sample_pick")
record = samples[samples["sample"] == sample_pick].iloc[0].to_dict()
(st.success if record["correct"] else st.error)(f"{record['status']}: {record['message'] or 'all trials matched the reference'}")
if record.get("max_abs_error") == record.get("max_abs_error") and record.get("max_abs_error") is not None:
    st.caption(f"max abs error {record['max_abs_error']:.3g}; path {record.get('path') or '-'}; {record.get('wall_s') or 0:.1f} s")
if record["code"]:
    if st.toggle("Colour the code by the base model's confidence", key="ev_heat"):
        with st.spinner("Scoring the candidate..."):
            html, info = candidate_heatmap(record, model=st.session_state.get("model") or models.model_name())
        if info["error_line_tokens"]:
            st.caption(f"error line: {info['error_line_tokens']} tokens, {info['low_confidence_share']:.0%} of them below p = 0.5")
        st.iframe(html, height="content")
    else:
        st.code(record["code"], language="python", line_numbers=True)
else:
    st.caption("The reply held no code.")
with st.expander("The model's whole reply"):
    st.code(record.get("reply") or "(not generated: a suite solution)", language=None)
