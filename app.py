"""EvalBoard dashboard: ``streamlit run app.py``. A router: pages live in pages/, logic in core/."""

import os

import streamlit as st

from pages._campaign_admin import refresh_control
from pages._filters import sidebar_filters
from pages._shared import dataset_picker, routed, warm_up

st.set_page_config(page_title="EvalBoard", page_icon=":material/analytics:", layout="wide")

PAGES = {
    "Analysis": [
        st.Page("pages/data.py", title="Data", icon=":material/database:", url_path="data", default=True),
        st.Page("pages/rankings.py", title="Rankings", icon=":material/emoji_events:", url_path="rankings"),
        st.Page("pages/leaderboard.py", title="Leaderboard", icon=":material/leaderboard:", url_path="leaderboard"),
        st.Page("pages/judge.py", title="Judge", icon=":material/gavel:", url_path="judge"),
        st.Page("pages/bias.py", title="Bias", icon=":material/balance:", url_path="bias"),
        st.Page("pages/annotators.py", title="Annotators", icon=":material/group:", url_path="annotators"),
        st.Page("pages/decisions.py", title="Decisions", icon=":material/fact_check:", url_path="decisions"),
        st.Page("pages/reports.py", title="Reports", icon=":material/download:", url_path="reports"),
    ],
    "Human evaluation": [
        st.Page("pages/evalset.py", title="Eval set", icon=":material/playlist_add_check:", url_path="evalset"),
        st.Page("pages/collect.py", title="Collect", icon=":material/cloud_download:", url_path="collect"),
        st.Page("pages/vote.py", title="Vote", icon=":material/how_to_vote:", url_path="vote"),
    ],
}

if os.environ.get("EVALBOARD_MODE") == "vote":
    # A voting server for annotators: the Vote page only, no navigation, no dataset picker.
    voting = st.navigation([st.Page("pages/vote.py", title="Vote", icon=":material/how_to_vote:", url_path="vote",
                                    default=True)], position="hidden")
    with routed():
        voting.run()
    st.stop()

warm_up()
navigation = st.navigation(PAGES)
with st.sidebar:
    st.caption("EvalBoard — rankings you can defend")
    if navigation.url_path != "vote":  # annotators see no datasets
        dataset = dataset_picker()
        refresh_control(dataset)  # a campaign's votes: republish the latest
        sidebar_filters(dataset)
with routed():  # the page's through_router() sees it was reached through here
    navigation.run()
