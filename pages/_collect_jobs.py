"""The Collect page's background jobs: the runs being collected now (progress read from the store, so it
shows again whenever the page is opened) with a Stop button, and how a run's last job ended."""

from __future__ import annotations

from contextlib import closing

import streamlit as st

from core.collect import jobs
from core.collect.results import format_seconds
from core.store.connection import connect
from pages._shared import plain

REFRESH_EVERY_S = 2.0
ENDED_LOOK = {"finished": st.success, "finished with errors": st.warning, "interrupted": st.warning}


def running_jobs(db_path: str) -> None:
    """The runs being collected now, redrawn every few seconds while any is."""
    with closing(connect(db_path)) as con:
        state = _state(con)
    if state:
        _panel(db_path, state)


def _state(con) -> tuple[tuple[jobs.Job, jobs.JobProgress], ...]:
    return tuple((job, jobs.progress_of(con, job)) for job in jobs.active_jobs(con))


def _shape(state) -> tuple:
    """What the rest of the page depends on: which jobs run, and whether their runs are stored yet."""
    return tuple((job.job_id, progress.expected > 0) for job, progress in state)


@st.fragment(run_every=REFRESH_EVERY_S)
def _panel(db_path: str, drawn: tuple) -> None:
    with closing(connect(db_path)) as con:
        state = _state(con)
        if _shape(state) != _shape(drawn):  # a job ended or began, or its run appeared: redraw the whole page
            st.rerun()
        st.subheader("Being collected now")
        for job, progress in state:
            _job_row(con, job, progress)


def _when(stamp: str) -> str:
    return stamp.replace("T", " ").replace("+00:00", " UTC")


def _job_row(con, job: jobs.Job, progress: jobs.JobProgress) -> None:
    state = "stopping: answers in flight may finish" if job.status == "stopping" else job.status
    st.markdown(f"**{plain(job.run)}** · {state} · process {job.pid or '…'} ({job.origin}, since "
                f"{_when(job.started_at)})")
    text = (f"{progress.answers:,} of {progress.expected:,} answers · {progress.failures:,} errors · "
            f"ETA {format_seconds(progress.eta_s)}") if progress.expected else "starting…"
    st.progress(progress.share, text=text)
    label = "Stop now (abandon the requests in flight)" if job.status == "stopping" else "Stop"
    if st.button(label, key=f"collect_stop_{job.job_id}",
                 help="stops asking; the answers in flight are stored (a second press abandons them); "
                      "start the run again to resume"):
        try:
            jobs.request_stop(con, job.job_id)
        except ValueError as exc:  # it ended or is still starting
            st.warning(plain(exc))
        st.rerun()


def last_job(db_path: str, run: str) -> jobs.Job | None:
    """How the run's latest job ended (nothing while one runs: the panel above shows it)."""
    with closing(connect(db_path)) as con:
        job = jobs.latest_job(con, run)
    if job is None or job.active:
        return job
    show = ENDED_LOOK.get(job.status, st.error)
    said = job.message if job.message.startswith(job.status) else f"{job.status}. {job.message}".strip()
    show(f"Last {job.origin} job ({_when(job.ended_at)}): {plain(said)}")
    if show is st.error and job.log_path:
        with st.expander("Its log"):
            st.code(jobs.log_tail(job), language=None)
    return job
