"""EvalBoard dashboard: ``streamlit run app.py``. A router: pages live in pages/, logic in core/."""

import streamlit as st

from pages._shared import dataset_picker

st.set_page_config(page_title="EvalBoard", page_icon="📊", layout="wide")

PAGES = [
    st.Page("pages/data.py", title="Data", icon="🗂️", url_path="data", default=True),
]

navigation = st.navigation(PAGES)
with st.sidebar:
    st.caption("EvalBoard — rankings you can defend")
    dataset_picker()
navigation.run()
