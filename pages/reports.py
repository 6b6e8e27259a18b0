"""Reports: build the report bundle of the active dataset, preview it, and download JSON, markdown, CSV and
a zip of PNG figures."""

import io
import json

import pandas as pd
import streamlit as st

from core.charts.export import png_unavailable_reason
from core.report.bundle import ReportSettings
from core.report.download import MIME, build_bundle, bundle_key, safe_stem
from core.report.judge_tables import baseline_choices
from core.store import default_db_path
from pages._filters import POLICY_LABELS, active_filters, active_policy, active_qualify
from pages._shared import active_dataset, load_dataset, plain, through_router

BUNDLE = "report_bundle"  # session key: the last built bundle (kept across page switches)

through_router()
st.title("Reports")

dataset = active_dataset()
if dataset is None or dataset.kind not in ("votes", "eval_runs", "preferences"):
    st.info("Reports are built from a votes dataset or an EvalRuns score table, or from judged preferences: pick one "
            "as the active dataset in the sidebar, or load one on the Data page (upload a file or load the samples).")
    st.stop()

filters = active_filters(dataset)
what = {"votes": "Bradley–Terry rankings per game and dimension, bias diagnostics and annotator quality",
        "eval_runs": "the leaderboard with bootstrap CIs, pairwise tests and the Friedman test",
        "preferences": "raw and length-controlled win rates against the baseline with "
                       "bootstrap CIs, per-category rates and the raw vs LC scatter"}[dataset.kind]
baselines = baseline_choices(load_dataset(str(default_db_path()), dataset.id, dataset.sha256)) \
    if dataset.kind == "preferences" else []
st.caption(f"Dataset **{plain(dataset.name)}** · {dataset.rows:,} rows"
           + (f" · filtered: {plain(filters.describe())}" if filters.active else "") + f". The bundle holds {what}.")

png_missing = png_unavailable_reason()
can_png = png_missing is None
with st.form("report_settings", border=True):
    a, b, c, d = st.columns(4)
    replicates = int(a.number_input("Bootstrap replicates", min_value=50, max_value=20_000, value=1000, step=100,
                                    key="report_bootstrap"))
    alpha = float(b.number_input("α", min_value=0.001, max_value=0.5, value=0.05, step=0.01, format="%.3f",
                                 key="report_alpha"))
    seed = int(c.number_input("Seed", min_value=0, value=0, step=1, key="report_seed"))
    png = d.toggle("PNG figures", value=can_png, disabled=not can_png, key="report_png",
                   help=None if can_png else f"PNG figures are unavailable: {plain(png_missing)}.")
    annotators = active_policy() if dataset.kind == "votes" else "exclude"
    if dataset.kind == "votes":
        st.caption(f"Annotators: {POLICY_LABELS[annotators].lower()} (the sidebar's choice, as on every page).")
    baseline = st.selectbox("Baseline", baselines, key="report_baseline") if len(baselines) > 1 else None
    build = st.form_submit_button("Build the report", type="primary", icon=":material/build:")

settings = ReportSettings(bootstrap=replicates, seed=seed, alpha=alpha, png=bool(png and can_png),
                          annotators=annotators, baseline=baseline,
                          qualify=active_qualify() if dataset.kind == "votes" else None)
key = bundle_key(dataset, filters, settings)
if build:
    frame = load_dataset(str(default_db_path()), dataset.id, dataset.sha256)
    with st.status("Building the report…", expanded=True) as status:
        bar = st.progress(0.0)

        def progress(step: int, total: int, label: str) -> None:
            bar.progress(min(step / total, 1.0), text=f"Step {step} of {total}: {label}")

        try:
            st.session_state[BUNDLE] = build_bundle(dataset, frame, filters, settings, progress)
        except ValueError as exc:  # InputError and RankingError say what to change
            status.update(label="The report could not be built", state="error")
            st.error(plain(exc))
            st.stop()
        status.update(label="Report ready", state="complete", expanded=False)

bundle = st.session_state.get(BUNDLE)
if bundle is None or bundle.key != key:
    st.info("Set the options and press **Build the report**: bootstrap intervals and PNG figures take a few "
            "seconds to a minute on large datasets.")
    st.stop()

stem = safe_stem(dataset.name)
st.subheader("Downloads")
cols = st.columns(5)
for col, suffix, label in zip(cols, (".json", ".md", ".csv"), ("JSON", "Markdown", "CSV")):
    found = bundle.file(suffix)
    if found:
        name, data = found
        col.download_button(label, data, file_name=f"{stem}-{name}", mime=MIME[suffix], help=name,
                            key=f"report_download_{suffix[1:]}", icon=":material/download:")
if bundle.figures:
    cols[3].download_button(f"{len(bundle.figures)} PNG figures (zip)", bundle.figures_zip(),
                            file_name=f"{stem}-figures.zip", mime=MIME[".zip"], key="report_download_png",
                            icon=":material/image:")
else:
    cols[3].caption(f"No PNG figures: {plain(bundle.png_note or 'not requested')}.")
cols[4].download_button("Everything (zip)", bundle.everything_zip(), file_name=f"{stem}-report.zip",
                        mime=MIME[".zip"], key="report_download_all", icon=":material/folder_zip:")

markdown, table, document, figures = st.tabs(["Markdown", "CSV", "JSON", "Figures"])
with markdown:
    text = bundle.file(".md")[1].decode("utf-8")
    st.markdown("\n".join(line for line in text.splitlines() if not line.startswith("![")))
with table:
    st.dataframe(pd.read_csv(io.BytesIO(bundle.file(".csv")[1])), hide_index=True, key="report_csv_preview")
with document:
    st.json(json.loads(bundle.file(".json")[1]), expanded=1)
with figures:
    if not bundle.figures:
        st.info(f"No PNG figures in this bundle: {plain(bundle.png_note or 'not requested')}.")
    for name, data in bundle.figures.items():
        st.image(data, caption=name)
