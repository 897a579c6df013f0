"""Results: did the fine-tuned models write kernels that compute the right answer?
Evaluation jobs and runs follow background work: a run that finishes shows without a reload."""

import streamlit as st

from cuset import jobs, models, report
from cuset.evaluate.evaluation import EvalConfig, submit_evaluation
from cuset.evaluate.evidence import candidate_heatmap
from cuset.evaluate.metrics import pass_at_k_table, summarise
from cuset.evaluate.results import ResultStore, results_csv
from cuset.experiment import RESULTS_DIR, kept_replies, list_experiments, load_experiment, read_replies, read_results
from cuset.experiment.background import following, log_tail, slow_units, start, units_table
from cuset.experiment.runner import SlowHardwareError
from cuset.experiment.validation import read_validation
from cuset.failures import run_failures
from cuset.figures.experiment import experiment_figure
from cuset.generate.config import PROTOCOLS
from cuset.models import BF16_SLOW_NOTE
from cuset.overview import job_rows, local_time, run_model, run_names
from pages.common import follow, job_table, sidebar

st.title("Results")
sidebar()
jobs.reconcile()
follow("results", "jobs+results", every=3)
store = ResultStore()
model = st.session_state["model"]
PROTOCOL_LABELS = {"full": "full: the model writes the whole module", "kernel-only": "kernel-only: the wrapper is given"}


@st.cache_data(show_spinner=False, max_entries=8)
def failures_report(run_id: int, version: tuple, fallback: str) -> dict:
    return run_failures(run_id, fallback=fallback)



with st.form("start_eval"):
    st.subheader("Evaluate")
    finetunes = jobs.JobStore().list(statuses=("completed",), kinds=("train",))
    sources = ["the suite's reference solutions (sanity check)", f"the base model ({model})"] + [f"job {j.id}: {j.method} fine-tune of {j.model} ({j.preset})" for j in finetunes]
    a, b, c, d = st.columns([3, 1, 1, 1])
    source = a.selectbox("Candidates from", sources, index=min(2, len(sources) - 1), key="ev_source")
    levels = b.multiselect("Levels (empty = all)", [1, 2, 3], key="ev_levels", placeholder="all levels",
                           help="Leave empty to evaluate every level")
    split = c.selectbox("Split", ["both", "in_distribution", "held_out"], key="ev_split")
    limit = d.number_input("First N tasks (0 = all)", min_value=0, value=0, key="ev_limit")
    e, f, _ = st.columns([2, 2, 2])
    protocol = e.selectbox("Protocol", PROTOCOLS, key="ev_protocol", format_func=PROTOCOL_LABELS.get,
                           help="kernel-only: the task's Python wrapper (from its reference solution) is in the prompt and the model "
                                "writes only the CUDA source; its numbers are not comparable with the whole-module protocol's")
    engine = f.selectbox("Generation engine", ("auto", "transformers", "openvino", "ctranslate2"), key="ev_engine",
                         help="openvino: OpenVINO GenAI on the CPU, 1.5-1.9x the transformers loop's tokens/s on the AMX Xeon "
                              "(exported once per model; `make openvino` builds its exporter's environment). ctranslate2: int8, "
                              "converted once per model; no faster than the loop beyond one row on the CPUs measured")
    if st.form_submit_button("Start evaluation"):
        fields = {"levels": levels, "split": "" if split == "both" else split, "limit": int(limit), "protocol": protocol, "engine": engine}
        if engine == "ctranslate2":
            fields["dtype"] = "int8"
        if source.startswith("the suite"):
            fields["solutions"] = "reference"
        elif source.startswith("job "):
            fields["model"] = f"job:{source.split(':')[0].split()[1]}"
        else:
            fields["model"] = model  # as the user named it, not 'default'
        try:
            job = submit_evaluation(EvalConfig(**fields))
            st.success(f"Started evaluation job {job.id}: it shows below while it runs.")
        except (ValueError, jobs.JobError) as exc:
            st.error(str(exc))


active = jobs.JobStore().list(statuses=jobs.ACTIVE + ("queued",), kinds=("eval",))
if active:
    st.subheader("Evaluations running")
    job_table(job_rows(active, "eval"), key="ev_jobs")
    pick, stop = st.columns([3, 1])
    target = pick.selectbox("Evaluation job", [j.id for j in active], format_func=lambda i: f"job {i}", key="ev_cancel_pick", label_visibility="collapsed")
    if stop.button("Cancel this evaluation", key="ev_cancel"):
        try:
            jobs.cancel(target)
        except jobs.JobError as exc:  # it ended meanwhile
            st.info(str(exc))
        st.rerun()



def _results_stamp(name: str) -> tuple:
    """When the results folder's tables last changed: the figure is redrawn only then, not
    on each rerun that a running job's heartbeat causes."""
    return tuple((p.name, p.stat().st_mtime_ns) for p in sorted((RESULTS_DIR / name).glob("*.csv")))


@st.cache_data(max_entries=8, show_spinner=False)
def _experiment_png(name: str, stamp: tuple) -> bytes:
    import io

    import matplotlib.pyplot as plt

    _, summary, paired = read_results(RESULTS_DIR / name)
    fig = experiment_figure({name: (summary, paired)})
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return buffer.getvalue()


st.subheader("Experiments")
names_x = list_experiments()
if names_x:
    pick_x, go_x = st.columns([3, 1])
    exp_name = pick_x.selectbox("Experiment (analysis/experiments/NAME.yaml)", names_x, key="ex_pick")
    try:
        exp = load_experiment(exp_name)
        unit_rows, exp_progress = units_table(exp_name)
    except ValueError as exc:
        st.error(str(exc))
    else:
        running_pid = following(exp_name)
        label = "Running in the background" if running_pid else ("Finished: rerun to rewrite results" if exp_progress.finished else "Start / resume in the background")
        slow = [] if running_pid else slow_units(exp_name)
        allow_slow = False
        if slow:
            st.warning(f"{len(slow)} unit(s) left compute in bfloat16 (the recipe's dtype), and {BF16_SLOW_NOTE}.")
            allow_slow = st.checkbox("Start anyway (units may take many times their estimate)", key="ex_allow_slow")
        if go_x.button(label, key="ex_start", disabled=bool(running_pid)):
            try:
                pid = start(exp_name, allow_slow_bf16=allow_slow)
                st.success(f"Started `python -m analysis.experiment {exp_name}` (process {pid}): its jobs show on the Fine-tunes page and above.")
            except (ValueError, SlowHardwareError) as exc:
                st.error(str(exc))
        st.caption(exp.description)
        hours, rest = divmod(int(exp_progress.eta_s), 3600)
        st.progress(exp_progress.done / max(exp_progress.total, 1),
                    text=f"{exp_progress.done} of {exp_progress.total} units done, {exp_progress.failed} failed"
                         + ("" if exp_progress.finished else f"; about {hours} h {rest // 60:02d} min left"))
        with st.expander("Units (fine-tunes and evaluation passes)", expanded=False):
            st.dataframe(unit_rows, hide_index=True, key="ex_units")
            tail = log_tail(exp_name, 8)
            if tail:
                st.code(tail, language=None)
        if exp.validation:  # fine-tunes judged by their held-out NLL: no pass, no candidates
            try:
                means, chosen_x = read_validation(RESULTS_DIR / exp.name)
            except ValueError:
                st.info(f"No results for {exp_name} yet: they appear here as its fine-tunes finish.")
            else:
                st.markdown("A validation experiment: each fine-tune's plain NLL on held-out corpus samples (never the suite's tasks), "
                            "its training NLL over all response tokens, and its mask at the base model's scores")
                st.dataframe(means, hide_index=True, key="ex_validation")
                st.markdown(f"**Chosen:** `{chosen_x}`, the lowest held-out NLL among the cuset fine-tunes" if chosen_x
                            else "No cuset fine-tune has a held-out NLL yet.")
                curves_png = RESULTS_DIR / exp.name / "training_nll.png"  # drawn by analysis.experiment from the kept metrics
                if curves_png.is_file():
                    st.image(str(curves_png), caption="Training NLL per step of each fine-tune: (a) all response tokens, "
                             "(b) CUDA-sensitive, (c) other tokens")
        else:
            try:
                _, exp_summary, exp_paired = read_results(RESULTS_DIR / exp.name)
            except ValueError:
                st.info(f"No results for {exp_name} yet: they appear here after its first evaluation pass finishes.")
            else:
                if exp_summary.empty:
                    st.info(f"No evaluated candidates in analysis/results/{exp.name}/ yet.")
                else:
                    st.markdown("pass@1 by method, with 95% intervals (Wilson with one candidate per task, else a bootstrap over tasks)")
                    percent = st.column_config.NumberColumn(format="percent")
                    st.dataframe(exp_summary, hide_index=True, key="ex_summary",
                                 column_config={c: percent for c in exp_summary.columns if c.startswith(("pass@", "compile_"))})
                    st.markdown("Each method against sft, paired by task: the share of candidates correct, and the share that compile "
                                "(bootstrap 95% interval of the difference; exact sign test)")
                    if exp_paired.empty:
                        st.info("No paired comparison yet: it needs sft and another method evaluated on the same tasks.")
                    else:
                        st.dataframe(exp_paired, hide_index=True, key="ex_paired",
                                     column_config={**{c: percent for c in ("mean_method", "mean_reference", "diff", "diff_low", "diff_high")},
                                                    "sign_p": st.column_config.NumberColumn("sign test p", format="%.3g")})
                    st.image(_experiment_png(exp.name, _results_stamp(exp.name)))
        kept = kept_replies(RESULTS_DIR / exp.name)
        with st.expander(f"Replies kept with the results ({len(kept)} of its evaluation passes)", expanded=False):
            if not kept:
                st.info("None kept: passes evaluated before 2026-12-04 kept their rows, not their replies.")
            else:
                u_col, t_col, s_col = st.columns([2, 2, 1])
                unit_x = u_col.selectbox("Pass", kept, key="ex_reply_unit", format_func=lambda i: f"{i.model} {i.method} s{i.seed} {i.mode}")
                try:
                    replies_x = read_replies(RESULTS_DIR / exp.name, unit_x)
                except ValueError as exc:
                    st.error(str(exc))
                else:
                    task_x = t_col.selectbox("Task", sorted({r["task"] for r in replies_x}), key="ex_reply_task")
                    picked_x = [r for r in replies_x if r["task"] == task_x]
                    sample_x = s_col.selectbox("Sample", [r["sample"] for r in picked_x], key="ex_reply_sample")
                    reply_x = next(r for r in picked_x if r["sample"] == sample_x)
                    line_x = f", line {reply_x['error_line']}" if reply_x["error_line"] is not None else ""
                    st.text(f"{reply_x['status']}{line_x}")
                    if reply_x["message"]:
                        st.code(reply_x["message"], language=None)
                    st.code(reply_x["reply"] or "(an empty reply)", language=None, height=480)  # replies run to 1,536 tokens: scroll
else:
    st.info("No experiments in analysis/experiments/.")

runs = store.runs()
if runs.empty:
    st.info("No evaluation runs yet: start one above, or run `cuset eval --solutions reference --limit 5`.")
    st.stop()
names = run_names(runs)
st.subheader("Runs")
shown = runs.assign(run=runs["id"].map(names), model=[run_model(r) for r in runs.to_dict("records")], finished=runs["finished"].map(local_time))
st.dataframe(shown[["run", "method", "model", "backend", "status", "candidates", "compile_rate", "correct_rate", "finished"]],
             hide_index=True, key="ev_runs", column_config={"compile_rate": st.column_config.NumberColumn("compile rate", format="%.2f"),
                                                          "correct_rate": st.column_config.NumberColumn("correct rate", format="%.2f")})
ids = runs["id"].tolist()
known = st.session_state.get("ev_known_runs")
if known is not None and set(ids) - set(known):  # runs that finished since the last draw join the view
    fresh = [i for i in ids if i not in known]
    st.session_state["ev_chosen"] = (fresh + [i for i in st.session_state.get("ev_chosen", []) if i in ids])[:3]
st.session_state["ev_known_runs"] = ids
chosen = st.multiselect("Runs to show side by side", ids, default=None if "ev_chosen" in st.session_state else ids[: min(3, len(ids))],
                        format_func=names.get, key="ev_chosen")
frame = store.frame(chosen)
if frame.empty:
    st.info("The chosen runs have no results yet.")
    st.stop()
frame["run"] = frame["run_id"].map(run_names(runs, short=True))  # plots: short names in legends and axes
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
    run_a = a.selectbox("Run A", chosen, index=0, key="ev_a", format_func=names.get)
    run_b = b.selectbox("Run B", chosen, index=1, key="ev_b", format_func=names.get)
    diff, counts = report.compare_attempted(frame, run_a, run_b)
    left_out = counts["only_a"] + counts["only_b"]
    st.caption(f"Over the {counts['both']} tasks both runs attempted: fixed in B: {counts['fixed']}, broken in B: {counts['broken']}, "
               f"unchanged: {counts['same']}."
               + (f" Left out: {left_out} tasks only one run attempted ({counts['only_a']} only in A, {counts['only_b']} only in B)." if left_out else ""))
    st.dataframe(diff, hide_index=True, key="ev_diff")

failures = st.expander("Do failures fall inside low-confidence sensitive regions?", key="ev_failures", on_change="rerun")
if failures.open:  # scores every failed candidate's code under the model that wrote it: only when asked
    with failures:
        run_f = st.selectbox("Run", chosen, key="ev_fail_run", format_func=names.get)
        try:
            with st.spinner("Scoring the failed candidates under the model that wrote them..."):
                found = failures_report(run_f, store.version(), model)  # suite solutions: scored under the sidebar's model
        except (ValueError, models.ModelError) as exc:
            st.info(str(exc))
        else:
            o = found["overall"]
            st.caption(f"Code scored under {found['model']}. {found['failed']} failed; {o['n']} located in the CUDA source ({found['by_how']['error line']} by error line, "
                       f"{found['by_how']['output stores']} by output stores), {found['located_outside_cuda']} outside it, {found['unlocated']} unlocated. "
                       "Chance: random lines of the same kernels. `cuset failures RUN --json` gives every failure.")
            if o["n"]:
                table = [{"group": "all located", **o}] + [{"group": k, **v} for k, v in found["by_status"].items()] + [{"group": f"region: {k}", **v} for k, v in found["by_kind"].items()]
                st.dataframe([{"group": r["group"], "located": r["n"], "inside a region": r["inside"], "share": r["share"],
                               "95% interval": f"{r['interval'][0]:.0%} to {r['interval'][1]:.0%}", "chance": r["chance"]} for r in table],
                             hide_index=True, key="ev_fail_table", column_config={"share": st.column_config.NumberColumn(format="percent"),
                                                                                  "chance": st.column_config.NumberColumn(format="percent")})

st.subheader("One candidate")
a, b, c = st.columns([1, 2, 1])
run_pick = a.selectbox("Run", chosen, key="ev_run_pick", format_func=names.get)
rows = frame[frame["run_id"] == run_pick]
if rows.empty:  # a run still being evaluated has no candidates yet
    st.info("This run has no results yet: they show here as its candidates are checked.")
    st.stop()
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
            html, info = candidate_heatmap(record, model=model or models.model_name())
        if info["error_line_tokens"]:
            st.caption(f"error line: {info['error_line_tokens']} tokens, {info['low_confidence_share']:.0%} of them below p = 0.5")
        st.iframe(html, height="content")
    else:
        st.code(record["code"], language="python", line_numbers=True)
else:
    st.caption("The reply held no code.")
with st.expander("The model's whole reply"):
    st.code(record.get("reply") or "(not generated: a suite solution)", language=None)
