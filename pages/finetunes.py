"""Fine-tunes: start CuSeT and baseline jobs in the background, watch them live, compare curves.
Evaluations and figures jobs are listed on the Results and Figures pages."""

import streamlit as st

from cuset import jobs, report
from cuset.objective import METHODS, list_named
from cuset.overview import job_rows, preset_for_model
from cuset.train import PRESETS, TrainConfig
from cuset.train.metrics import data_summary
from pages.common import job_table, sidebar

st.title("Fine-tunes")
sidebar()
jobs.reconcile()  # mark jobs whose process vanished as lost; start queued ones
model = st.session_state["model"]
presets = list(PRESETS)
preset_help = "; ".join(f"{name}: trains {values.get('model', '?')}" for name, values in PRESETS.items())

with st.form("start"):
    st.subheader("Start a fine-tune")
    a, b, c, d = st.columns(4)
    method = a.selectbox("Method", METHODS, index=METHODS.index("cuset"), key="ft_method")
    preset = b.selectbox("Preset", presets, index=presets.index(preset_for_model(model, PRESETS)), key="ft_preset",
                         help=f"{preset_help}. The default is the preset of the model the app shows ({model}).")
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
            st.success(f"Started job {job.id} ({method}, preset {preset}, model {job.model}): status {job.status}.")
        except (ValueError, jobs.JobError) as exc:
            st.error(str(exc))


@st.fragment(run_every=2)
def live() -> None:
    """Refreshes every 2 s: the fine-tunes, loss curves of the chosen ones, and the actions and
    log of one job, so a job that ends while the page is open shows as ended."""
    listed = jobs.JobStore().list(kinds=("train",))
    if not listed:
        st.info("No fine-tunes yet: start one above, or with `cuset train --method cuset --detach`.")
        return
    job_table(job_rows(listed, "train"), key="job_table")
    ids = [j.id for j in listed]
    by_id = {j.id: j for j in listed}
    chosen = st.multiselect("Compare loss curves of jobs", ids, default=ids[: min(3, len(ids))], key="ft_compare",
                            format_func=lambda i: f"job {i} ({by_id[i].method})")
    curves = {f"job {i} ({by_id[i].method})": jobs.read_job_metrics(i) for i in chosen if i in by_id}
    left, right = st.columns(2)
    left.plotly_chart(report.training_curves(curves, "loss"), key="curve_loss")
    right.plotly_chart(report.training_curves(curves, "nll"), key="curve_nll")

    st.subheader("Act on a job")
    pick = st.selectbox("Job", ids, format_func=lambda i: f"job {i}: {by_id[i].method}", key="ft_pick")
    job = by_id[pick]
    a, b, status = st.columns([1, 1, 4])
    if not job.is_final and a.button("Cancel", key="ft_cancel"):
        try:
            job = jobs.cancel(pick)
            st.warning(f"Job {pick}: {job.status}.")
        except jobs.JobError as exc:  # it ended between the table and the click
            st.info(str(exc))
    if job.status in ("cancelled", "lost", "failed") and b.button("Resume", key="ft_resume"):
        job = jobs.resume(pick)
        st.success(f"Job {pick} resumed: {job.status}.")
    status.caption(f"Job {pick} is {job.status}" + (f" ({job.phase}, step {job.step}/{job.total_steps})" if not job.is_final else "")
                   + (f": {job.error}" if job.error else "."))
    summary = data_summary(jobs.job_folder(pick))
    if summary:
        status.caption(summary)
    st.caption(f"Log of job {pick} (last 200 lines, live)")
    st.code(jobs.read_log(pick, tail_lines=200) or "(nothing logged yet)", language=None, height=260)


live()
