"""Fine-tunes: start CuSeT and baseline jobs in the background, watch them live, compare curves."""

import pandas as pd
import streamlit as st

from cuset import jobs, report
from cuset.objective import METHODS, list_named
from cuset.train import PRESETS, TrainConfig

st.title("Fine-tunes")
jobs.reconcile()  # mark jobs whose process vanished as lost; start queued ones

with st.form("start"):
    st.subheader("Start a fine-tune")
    a, b, c, d = st.columns(4)
    method = a.selectbox("Method", METHODS, index=METHODS.index("cuset"), key="ft_method")
    preset = b.selectbox("Preset", list(PRESETS), index=list(PRESETS).index("cpu"), key="ft_preset",
                         help="tiny: seconds (random model); cpu: SmolLM2-135M + LoRA, minutes here; gpu: one GPU, 1.5B model")
    configs = ["(defaults)"] + list_named()
    objective = c.selectbox("Objective config", configs, key="ft_objective", help="Saved on the Threshold and weights page")
    steps = d.number_input("Max steps (0 = preset)", min_value=0, value=0, step=1, key="ft_steps")
    e1, e2 = st.columns([3, 1])
    evaluate = e1.checkbox("Evaluate the final model when done (results on the Results page)", value=True, key="ft_evaluate")
    eval_limit = e2.number_input("on the first N suite tasks (0 = all)", min_value=0, value=0, key="ft_eval_limit")
    if st.form_submit_button("Start job"):
        overrides = {"method": method, "evaluate": {"limit": int(eval_limit)} if evaluate else False}
        if objective != "(defaults)":
            overrides["objective"] = objective
        if steps:
            overrides["max_steps"] = int(steps)
        try:
            job = jobs.submit(TrainConfig.from_preset(preset, **overrides))
            st.success(f"Started job {job.id} ({method}, {preset}): status {job.status}.")
        except (ValueError, jobs.JobError) as exc:
            st.error(str(exc))


@st.fragment(run_every=2)
def live() -> None:
    """Refreshes every 2 s: the job table, loss curves of the chosen jobs, actions."""
    listed = jobs.list_jobs()
    if not listed:
        st.info("No jobs yet: start one above, or with `cuset train --method cuset --detach`.")
        return
    table = pd.DataFrame([
        {"id": j.id, "method": j.method, "preset": j.preset, "status": j.status, "phase": j.phase,
         "progress": j.progress, "step": f"{j.step}/{j.total_steps}", "ETA (s)": j.eta_s, "error": j.error}
        for j in listed
    ])
    st.dataframe(table, hide_index=True, key="job_table",
                 column_config={"progress": st.column_config.ProgressColumn(min_value=0.0, max_value=1.0)})
    ids = [j.id for j in listed]
    chosen = st.multiselect("Compare loss curves of jobs", ids, default=ids[: min(3, len(ids))], key="ft_compare")
    curves = {f"job {i} ({jobs.get(i).method})": jobs.read_job_metrics(i) for i in chosen}
    left, right = st.columns(2)
    left.plotly_chart(report.training_curves(curves, "loss"), key="curve_loss")
    right.plotly_chart(report.training_curves(curves, "nll"), key="curve_nll")


live()

st.subheader("Act on a job")
listed = jobs.list_jobs()
if listed:
    pick = st.selectbox("Job", [j.id for j in listed], format_func=lambda i: f"job {i}", key="ft_pick")
    job = jobs.get(pick)
    a, b, _ = st.columns([1, 1, 4])
    if a.button("Cancel", disabled=job.is_final, key="ft_cancel"):
        job = jobs.cancel(pick)
        st.warning(f"Job {pick}: {job.status}.")
    if b.button("Resume", disabled=job.status not in ("cancelled", "lost", "failed"), key="ft_resume"):
        job = jobs.resume(pick)
        st.success(f"Job {pick} resumed: {job.status}.")
    with st.expander(f"Log of job {pick}"):
        st.code(jobs.read_log(pick, tail_lines=200) or "(empty)", language=None)
