"""Figures: the paper figures from the stored results, with downloads; regenerated in the background."""

import re
from pathlib import Path

import streamlit as st

from cuset import figures, jobs
from cuset.overview import local_time
from pages.common import sidebar

MIME = {"pdf": "application/pdf", "svg": "image/svg+xml", "png": "image/png"}


def plain(text: str) -> str:
    """Text shown as itself: markdown and LaTeX ($) characters escaped (data names hold '_')."""
    return re.sub(r"([\\*_{}\[\]<>()#+!|~$])", r"\\\1", text)


st.title("Paper figures")
sidebar()
jobs.reconcile()
st.caption(f"Folder: `{figures.default_dir()}`; the same files come from `python -m analysis.figures`.")
manifest = figures.read_manifest()
shown = manifest[0].get("generated_unix") if manifest else None
model = st.session_state["model"]
job = figures.latest_job()
running = job is not None and not job.is_final

if st.button("Regenerate all figures", key="fig_regenerate", type="primary", disabled=running,
             help=f"A background job: scores under {model} (what is not cached yet), fine-tune metrics, evaluation runs. One at a time."):
    try:
        job = jobs.submit(figures.FiguresConfig(model=model))
        running = not job.is_final
        st.success(f"Started job {job.id}: status {job.status}.")
    except (ValueError, jobs.JobError) as exc:
        st.error(str(exc))
if running:
    note, stop = st.columns([5, 1])
    note.caption(f"Job {job.id} is making the figures: a new one can start when it ends.")
    if stop.button(f"Cancel job {job.id}", key="fig_cancel"):
        try:
            jobs.cancel(job.id)
        except jobs.JobError as exc:  # it ended meanwhile
            st.info(str(exc))
        st.rerun()


@st.fragment(run_every=2)
def progress() -> None:
    """The newest figures job, live; reloads the page when it has written new figures or ended."""
    job = figures.latest_job()
    now = figures.read_manifest()
    if (now[0].get("generated_unix") if now else None) != shown or (running and (job is None or job.is_final)):
        st.rerun()
    if job is None:
        return
    if not job.is_final:
        waiting = f" (waits for a free job slot: {jobs.max_running()} at once)" if job.status == "queued" else ""
        st.progress(job.progress, text=plain(f"Job {job.id}: {job.status}, {job.phase} {job.step}/{job.total_steps}{waiting}"))
    elif job.status != "completed":
        st.error(plain(f"Job {job.id} {job.status}: {job.error or 'see its log (cuset jobs logs ' + str(job.id) + ')'}"))


progress()

if manifest is None:
    if running:
        st.info(f"The figures are being made by job {job.id}; they show here when it has written them.")
    else:
        st.info("No figures yet: press **Regenerate all figures**, or run `python -m analysis.figures`.")
    st.stop()

info, made = manifest
config = info.get("config", {})
st.caption(plain(f"Generated {local_time(info.get('generated_unix')) or info.get('generated', '?')} from model {config.get('model', '?')} on {config.get('data', '?')}."))
for figure in (f for f in made if f.made):
    st.subheader(figure.title)
    if "png" in figure.files:
        st.image(figure.files["png"], width=900, alt=figure.title)
    st.caption(plain(figure.caption))
    row = st.container(horizontal=True)
    for fmt, path in figure.files.items():
        row.download_button(fmt.upper(), Path(path).read_bytes(), file_name=Path(path).name, mime=MIME[fmt],
                            key=f"dl_{figure.name}_{fmt}", help=f"{figure.name}.{fmt}")
skipped = [f for f in made if not f.made]
if skipped:
    st.subheader("Not made this time")
    for figure in skipped:
        st.markdown(f"- **{plain(figure.title)}**: {plain(figure.skipped)}")
