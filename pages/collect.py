"""Collect: every model's answer to every eval-set query. A run goes on in the background (closing the tab
does not stop it); its progress, summary, answers file and a campaign from its answers are read from the
store whenever the page is opened."""

import streamlit as st

from core.store import default_db_path
from pages._collect_jobs import running_jobs
from pages._collect_parts import start_section
from pages._collect_run import stored_run_section
from pages._shared import through_router

through_router()
st.title("Collect")
st.caption("Ask every model of a models file every query of an eval set, each provider within its concurrency "
           "limit. A run goes on in the background, also when this tab is closed; answers are stored as they "
           "arrive, and starting the same run name again resumes it.")

db_path = str(default_db_path())
running_jobs(db_path)
start_section(db_path)
stored_run_section(db_path)
