"""Annotators: who can be trusted (golden accuracy, fast answers), how much they agree, whose votes the
sequential screen flags, and what leaving the unqualified out does to the ranking."""

import streamlit as st

from core.annotators.quality import FAST_SECONDS, MAX_FAST_RATE, MIN_GOLDEN, MIN_GOLDEN_ACCURACY, status_counts
from core.annotators.render import coefficient, comparison_table, kappa_table, quality_table
from core.charts.annotators import quality_scatter, response_time_histogram
from core.store import default_db_path
from pages._annotators_crowd import draw_crowd
from pages._annotators_parts import COMPARISON_FORMATS, QUALITY_FORMATS, compute_annotators, draw_screen
from pages._filters import active_policy, active_qualify, votes_header
from pages._prefetch import prefetch_vote_pages
from pages._shared import plain, through_router, votes_dataset_or_stop

through_router()
st.title("Annotators")

dataset = votes_dataset_or_stop("Annotator quality needs a votes dataset with an annotator_id column")
if "annotator_id" not in dataset.columns:
    st.info(f"Dataset **{plain(dataset.name)}** has no annotator_id column: there is nobody to assess. Votes "
            "with annotator ids (and golden questions or response times) unlock this page.")
    st.stop()

filters, alpha = votes_header(dataset, "annotators_alpha", "α (accuracy CI)")

with st.spinner("Assessing annotators…"):
    report, seconds, request = compute_annotators(str(default_db_path()), dataset.id, dataset.sha256, filters,
                                                  alpha, active_policy(), active_qualify())
quality = report.quality
if len(quality) == 0:
    st.info("No votes with an annotator after the sidebar filters." if filters.active else "No annotated votes.")
    st.stop()

st.caption(" · ".join(map(plain, request)) + ". Votes per annotator are judged items (one each, "
           "however many dimensions an item was judged on).")
counts = status_counts(quality)
a, b, c, d = st.columns(4)
a.metric("Annotators", f"{len(quality):,}")
b.metric("Qualified", f"{counts.get('qualified', 0):,}")
c.metric("Unqualified", f"{counts.get('unqualified', 0):,}")
d.metric("Not evaluable", f"{counts.get('not_evaluable', 0):,}", help="Fewer than "
         f"{MIN_GOLDEN} golden answers and no response times: no rule can be applied.")
st.caption(f"Unqualified: golden accuracy below {MIN_GOLDEN_ACCURACY:.2f} (with at least {MIN_GOLDEN} golden "
           f"answers), or more than {MAX_FAST_RATE:.0%} of votes faster than {FAST_SECONDS:g} s.")

st.subheader("Quality")
st.dataframe(quality_table(quality), hide_index=True, column_config=QUALITY_FORMATS, key="annotators_quality")
scatter, times = st.columns(2)
scatter.plotly_chart(quality_scatter(quality, MAX_FAST_RATE, MIN_GOLDEN_ACCURACY), key="annotators_scatter")
times.plotly_chart(response_time_histogram(seconds, FAST_SECONDS), key="annotators_times")
draw_crowd(dataset, filters, alpha, quality)

st.subheader("Agreement")
ag = report.agreement
st.caption(f"On real overlap only: items (same query and model pair, either side) judged by two or more "
           f"annotators. Golden items are set apart ({ag['n_golden_items']:,} judged by several annotators); "
           "golden accuracy above measures them.")
if ag["n_items"] == 0:
    st.info("No item (same query and pair of models) was rated by two or more annotators: agreement cannot be "
            "measured.")
else:
    if ag["reason"]:
        st.warning(f"{ag['reason'][0].upper()}{ag['reason'][1:]}: no coefficient is shown. Below "
                   f"{ag['min_overlap_items']} overlapping items a κ's 95% interval is wider than ±0.45.")
    a, b, c = st.columns(3)
    a.metric("Items rated by several annotators", f"{ag['n_items']:,}")
    b.metric("Krippendorff's α", coefficient(ag["krippendorff_alpha"]),
             help="Nominal α over left / right / tie on every multiply-rated item; 1 = perfect, 0 = chance.")
    c.metric("Fleiss' κ", coefficient(ag["fleiss_kappa"]),
             help=f"On the {ag.get('fleiss_n_items', 0):,} items with the most common number of raters "
                  f"({ag.get('fleiss_raters_per_item')}).")
    pairs = kappa_table(ag)
    if len(pairs):
        with st.expander(f"Cohen's κ for {len(pairs):,} annotator pairs (none below "
                         f"{ag['min_overlap_items']} shared items)"):
            st.dataframe(pairs, hide_index=True, column_config={"κ": st.column_config.NumberColumn(format="%.3f")},
                         key="annotators_pairs")

draw_screen(report.screen)

st.subheader("Ranking with and without the unqualified")
comparison = report.comparison
if comparison.reason is not None:
    st.error(f"No ranking: {plain(comparison.reason)}")
else:
    st.caption(f"Bradley–Terry (no intervals) on every vote and after the annotator policy "
               f"({plain(request[-1])}); {comparison.moved} models change rank.")
    st.dataframe(comparison_table(comparison), hide_index=True, column_config=COMPARISON_FORMATS,
                 key="annotators_comparison")

prefetch_vote_pages(dataset, filters)  # the other votes page, in the background
