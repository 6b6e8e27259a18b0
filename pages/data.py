"""Data: upload and validate inputs, map unfamiliar files, store, preview and delete datasets."""

import streamlit as st

from core.annotators.golden_names import plain_frame
from core.io import MISSING_RULES, READ_KINDS, InputError, load
from core.samples.demo import ensure_samples
from pages._campaign_admin import campaign_section
from pages._mapping import mapping_form
from pages._shared import list_datasets, load_dataset, open_store, plain, select_after_rerun, through_router
from pages._uploads import current_ids, lm_eval_request, matrix_request

through_router()
st.title("Data")
PREVIEW_ROWS = 200
flash = st.session_state.pop("data_flash", None)
if flash:
    st.success(plain(flash[0]))
    for note in flash[1]:
        st.caption(f"note: {plain(note)}")


def store(read, files_id: tuple[str, ...]) -> None:
    """Validate and store, then rerun: on success with the message and the new dataset active, else the error."""
    bar = st.progress(0.0, text="Validating…")
    try:
        loaded = read()
        with open_store() as db:  # the dataset name is checked here: a bad one is an InputError too
            result = db.ingest(loaded, name=st.session_state.get("upload_name") or None,
                               progress=lambda done, total: bar.progress(done / total, text=f"Storing {done:,} rows"))
    except InputError as exc:
        bar.empty()
        st.session_state["upload_error"] = (files_id, str(exc))  # shown only while these files are chosen
        st.rerun()  # the error is drawn above the mapping form's button: show it now, not after the next click
    st.session_state.pop("upload_error", None)
    st.session_state.pop("upload_name", None)  # the next file gets its own name
    st.session_state["data_flash"] = (result.summary(), list(loaded.notes))
    select_after_rerun(result.dataset.id)
    st.session_state["preview_dataset"] = result.dataset.id  # the preview below is not drawn yet in this run
    st.rerun()


def show_error(files_id: tuple[str, ...]) -> bool:
    error = st.session_state.get("upload_error")
    if error and error[0] == files_id:
        st.error("The file was not stored.")
        st.code(error[1], language=None, wrap_lines=True)  # long problem lines and the hint stay readable
        return True
    return False


st.subheader("Add a dataset")
st.caption("Votes (CSV, JSON, JSONL, Parquet; Chatbot Arena records; left/right/winner), counts tables, "
           "EvalRuns (long or wide score tables, lm-evaluation-harness results JSON), a win-rate matrix, or judged "
           "preferences against a baseline (AlpacaEval annotations; shown on the Judge page).")
upload = st.file_uploader("File", type=["csv", "tsv", "json", "jsonl", "parquet", "gz"], key="upload_file")
left, middle, right = st.columns(3)
kind = left.selectbox("It holds", ["detect", *READ_KINDS], key="upload_kind",
                      format_func=lambda k: "detect from the columns" if k == "detect" else k.replace("_", " "))
missing = middle.radio("Score cells without a score", MISSING_RULES, key="upload_missing", horizontal=True,
                       format_func={"skip": "not scored", "zero": "score 0"}.get,
                       help="score tables: an empty, NA or absent (model, task) cell is left out of the model's "
                            "mean (not scored, the default) or counts 0")
right.text_input("Dataset name", key="upload_name", placeholder="default: the file name")
if upload is not None:
    error = show_error((upload.file_id,))
    with st.expander("Map columns and outcomes", expanded=True):
        mapped = mapping_form(upload)
    # One button stores what the form shows: the detected reading, or the mapping chosen above.
    if st.button("Validate and store", key="upload_store", type="primary"):
        if mapped is None:
            store(lambda: load(upload, name=upload.name, kind=None if kind == "detect" else kind, missing=missing),
                  (upload.file_id,))
        else:
            mapped_kind, columns, outcomes = mapped
            store(lambda: load(upload, name=upload.name, kind=mapped_kind, columns=columns, outcomes=outcomes,
                               missing=missing), (upload.file_id,))
error_id = (st.session_state.get("upload_error") or ((),))[0]
with st.expander("Several files: lm-evaluation-harness results · a win-rate matrix with its counts",
                 expanded=bool(error_id) and error_id in current_ids()):
    request = lm_eval_request() or matrix_request()
    for files_id in current_ids():
        show_error(files_id)
if request:
    store(*request)

with st.expander("Voting campaigns: blind A/B votes from annotators with tokens"):
    campaign_section()

st.subheader("Stored datasets")
datasets = list_datasets()
if st.button("Load the sample datasets", key="load_samples",
             help="arena_demo: 20,000 simulated blind A/B votes; evalruns_demo: 3 models × 12 tasks; "
                  "judge_demo: 8 models' judged preferences on 120 prompts against a baseline"):
    with open_store() as db:
        results = ensure_samples(db)
    st.session_state["data_flash"] = ("; ".join(r.summary() for r in results), [])
    st.rerun()
if not datasets:
    st.info("The store is empty: upload a file above or load the sample datasets.")
    st.stop()
st.dataframe([{"id": d.id, "name": d.name, "kind": d.kind, "rows": d.rows, "created (UTC)": d.created_at,
               "source": d.source} for d in datasets], hide_index=True, key="datasets_table",
             column_config={"rows": st.column_config.NumberColumn(format="localized")})
by_id = {d.id: d for d in datasets}
chosen = st.selectbox("Preview", list(by_id), key="preview_dataset",
                      format_func=lambda i: f"{by_id[i].name} ({by_id[i].kind.replace('_', ' ')})")
info = by_id[chosen]
with open_store() as db:
    frame = load_dataset(str(db.path), info.id, info.sha256, limit=PREVIEW_ROWS)
shown = f"the first {PREVIEW_ROWS} of " if info.rows > PREVIEW_ROWS else ""
st.caption(f"{shown}{info.rows:,} rows · columns: {', '.join(info.columns)}")
st.dataframe(plain_frame(frame), key="preview_table")  # golden questions' stand-in names in plain words
for note in info.notes:
    st.caption(f"note: {plain(note)}")
confirm = st.checkbox(f"Yes, delete '{plain(info.name)}' and its {info.rows:,} rows", key="delete_confirm")
if st.button("Delete dataset", key="delete_dataset", disabled=not confirm):
    with open_store() as db:
        db.delete(info.id)
    st.session_state["data_flash"] = (f"Deleted '{info.name}'.", [])
    st.session_state.pop("delete_confirm", None)
    st.rerun()
