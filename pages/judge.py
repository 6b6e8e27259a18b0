"""Judge: win rates of judged preferences against a baseline, raw and length-controlled (AlpacaEval-style)."""

import streamlit as st

from core.charts.export import png_unavailable_reason
from core.charts.judge import category_winrate_heatmap, lc_vs_raw_scatter
from core.judge.types import JudgeError
from core.report.download import safe_stem
from core.report.judge_tables import (
    baseline_choices,
    category_rates,
    lc_warnings,
    model_table,
    n_models,
    notes,
    scatter_rows,
    without_lc,
)
from core.store import default_db_path
from pages._judge_parts import cached_judge, downloads, missing_lc_caption, settings_row, shown_table
from pages._shared import active_dataset, load_dataset, plain, through_router

through_router()
st.title("Judge")

dataset = active_dataset("preferences")
if dataset is None:
    other = active_dataset()
    where = {"votes": "the Rankings page", "counts": "the Rankings page", "winrate_matrix": "the Rankings page",
             "eval_runs": "the Leaderboard page"}.get(other.kind if other else "", "the page of its kind")
    st.info("The Judge page reads judged preferences: one row per (model, prompt) with P(the model's answer beats "
            "a baseline's), as AlpacaEval, Arena-Hard or MT-bench pairwise give them. Choose a preferences dataset "
            "in the sidebar, or add one on the Data page"
            + (f" (the active dataset holds {other.kind.replace('_', ' ')}: see {where})." if other else "."))
    st.stop()

db_path = str(default_db_path())
prefs = load_dataset(db_path, dataset.id, dataset.sha256)
baseline, replicates, lc_replicates, alpha, seed = settings_row(baseline_choices(prefs), dataset.rows)
try:
    with st.spinner("Fitting the length control and bootstrapping the prompts…"):
        result = cached_judge(db_path, dataset.id, dataset.sha256, baseline, replicates, lc_replicates, alpha, seed)
except JudgeError as exc:
    st.error(f"No win rates for this dataset: {plain(exc)}")
    st.stop()

doc = result.as_dict()
table = model_table(doc)
intervals = [f"{n:,} {what} replicates" for n, what in ((replicates, "win-rate"), (lc_replicates, "LC")) if n]
st.caption(f"Dataset {plain(dataset.name)}: {dataset.rows:,} rows · {n_models(doc)} models against "
           f"**{plain(result.baseline)}** · " + (f"{', '.join(intervals)}, α = {alpha:g}, seed {seed}" if intervals
                                                 else "no intervals"))

st.subheader("Win rates")
shown, formats = shown_table(table)
st.dataframe(shown, hide_index=True, key="judge_table", column_config=formats)
missing_lc_caption(without_lc(doc), table)
st.caption("Percent, AlpacaEval's names: length_controlled_winrate (LC) is the win rate the judge would give at "
           "equal answer lengths; win_rate is the raw mean preference. The baseline shows 50 / 50.")
warned = lc_warnings(doc)
if warned:
    st.warning(f"LC moves far from the raw rate for {len(warned)} model{'s' if len(warned) != 1 else ''} "
               "(more than 10 points and a quarter of the way to 0 or 100): read their LC with care.\n\n"
               + "\n".join(f"- **{plain(m)}**: {plain(w)}" for m, w in warned), icon=":material/warning:")

st.subheader("Raw vs length-controlled")
figure = lc_vs_raw_scatter(scatter_rows(doc), result.baseline)
st.plotly_chart(figure, key="judge_scatter")
st.caption("Above the diagonal: length held the model's raw rate down; below it: longer answers helped it. "
           "Hover a point for its name; only the best, the worst and the models LC moves most are labelled.")

by_category = category_rates(doc)
if not by_category.empty:
    st.subheader("Per category")
    st.plotly_chart(category_winrate_heatmap(by_category), key="judge_categories")
    with st.expander("Per-category win rates as a table"):
        st.dataframe(by_category.reset_index(), hide_index=True, key="judge_category_table",
                     column_config={str(c): st.column_config.NumberColumn(format="%.1f") for c in by_category})

st.subheader("Notes")
for note in notes(doc):
    st.caption(plain(note))

st.subheader("Downloads")
png_reason = png_unavailable_reason()
downloads(result, figure, safe_stem(dataset.name), png_reason is None, plain(png_reason or ""))
