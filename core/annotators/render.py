"""The annotators report as the JSON contract of docs/design.md "CLI" (``{"annotators": [...], "agreement":
{...}}`` plus the extra blocks ``exclusion_effect`` and, inside ``agreement``, ``majority_agreement`` and
the Fleiss details), as markdown, and as the Annotators page's tables.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from core.annotators.quality import status_counts
from core.annotators.report import AnnotatorReport, PolicyComparison
from core.annotators.screen import ScreenResult
from core.formats import dumps, markdown_table, markdown_text, undefined_as_null
from core.formats import number as _number

ANNOTATOR_KEYS = ("annotator_id", "n_votes", "n_golden", "golden_accuracy", "golden_ci_low", "golden_ci_high",
                  "fast_rate", "status", "reasons")
AGREEMENT_KEYS = ("n_items", "krippendorff_alpha", "fleiss_kappa", "cohen_kappa")
PAIR_KEYS = ("annotator_1", "annotator_2", "n_items", "kappa")


def _annotator_rows(quality: pd.DataFrame) -> list[dict[str, Any]]:
    rows = []
    for rec in quality.to_dict("records"):
        row = {k: rec[k] for k in ANNOTATOR_KEYS}
        row["annotator_id"] = str(row["annotator_id"])
        row["n_votes"], row["n_golden"] = int(row["n_votes"]), int(row["n_golden"])
        row["reasons"] = list(row["reasons"])
        rows.append(row)
    return rows


def report_dict(report: AnnotatorReport) -> dict[str, Any]:
    """The JSON contract (docs/design.md "CLI")."""
    ag = report.agreement
    agreement = {k: ag[k] for k in AGREEMENT_KEYS if k != "cohen_kappa"}
    agreement["cohen_kappa"] = [{k: p[k] for k in PAIR_KEYS} for p in ag["cohen_kappa"]]
    agreement.update({k: v for k, v in ag.items() if k not in AGREEMENT_KEYS})
    # null = not computable: accuracy without golden answers (status not_evaluable), κ/α without shared
    # items (n_items), the rating of a model the exclusion removed (rank_after null)
    screen = {"screen": report.screen.as_dict()} if report.screen is not None else {}
    return undefined_as_null({"annotators": _annotator_rows(report.quality), "agreement": agreement,
                              "exclusion_effect": report.exclusion_effect, **screen, **report.request})


def to_json(report: AnnotatorReport) -> str:
    return dumps(report_dict(report))


def number(value: float, digits: int) -> str:
    """``digits`` decimals; "–" where the statistic is not computable (see report_dict)."""
    return _number(undefined_as_null(value), digits)


def _percent(value: float) -> str:
    return "–" if value is None or not np.isfinite(value) else f"{value:.0%}"


def agreement_markdown(ag: dict[str, Any], max_pairs: int = 20) -> list[str]:
    """The "Agreement" section: coefficients on real overlap only, or why there are none."""
    minimum = ag.get("min_overlap_items", 1)
    lines = ["## Agreement", "",
             f"{ag['n_items']} items rated by two or more annotators (item = prompt + model pair, orientation "
             "canonicalised; categories left / right / tie, both-bad counts as tie). Golden items are not part "
             f"of it ({ag.get('n_golden_items', 0)} rated by several annotators): golden accuracy above measures "
             "them.", ""]
    reason = ag.get("reason")
    if reason:
        lines += [f"**{markdown_text(reason[0].upper() + reason[1:])}.**" + (
            f" Fewer than {minimum} overlapping items give no meaningful coefficient (even with 10, a κ's 95% "
            "interval is about ±0.45), so none is shown." if ag["n_items"] < minimum else ""), ""]
    lines += [f"- Krippendorff α (nominal): {number(ag['krippendorff_alpha'], 3)}",
              f"- Fleiss κ: {number(ag['fleiss_kappa'], 3)}" + (
                  f" (the {ag['fleiss_n_items']} items with {ag['fleiss_raters_per_item']} raters each)"
                  if ag.get("fleiss_raters_per_item") and not ag.get("reason") else ""), ""]
    pairs = sorted(ag["cohen_kappa"], key=lambda p: -p["n_items"])
    if pairs:
        shown = pairs[:max_pairs]
        lines += [markdown_table(["Annotator 1", "Annotator 2", "Shared items", "Cohen κ"],
                                 [[markdown_text(p["annotator_1"]), markdown_text(p["annotator_2"]), p["n_items"],
                                   number(p["kappa"], 3) if p["n_items"] >= minimum
                                   else f"– (fewer than {minimum} shared)"] for p in shown], "llrr")]
        if len(pairs) > max_pairs:
            lines.append(f"\n({len(pairs) - max_pairs} more pairs with fewer shared items in the JSON output.)")
        lines.append("")
    return lines


def to_markdown(report: AnnotatorReport, max_pairs: int = 20) -> str:
    """Readable report: the quality table, the agreement coefficients, the exclusion effect."""
    q = report.quality
    counts = status_counts(q)
    lines = ["# Annotators", ""]
    if report.request_lines:
        lines += [markdown_text(". ".join(report.request_lines)) + ".", ""]
    lines += [f"{report.n_votes} judged items (votes: one per item, however many dimensions it was judged on), "
             f"{len(q)} annotators: " + ", ".join(
                 f"{n} {s.replace('_', ' ')}" for s, n in counts.items()
             ) + ". Rules (docs/methods.md §7): ≥ 3 golden answers and accuracy < 60% ⇒ unqualified; "
             "more than 30% of votes faster than 3 s ⇒ unqualified.", ""]
    ci = f"{1 - report.alpha:.0%} CI"
    rows = [[markdown_text(r["annotator_id"]), r["n_votes"], r["n_golden"], _percent(r["golden_accuracy"]),
             f"{number(r['golden_ci_low'], 2)}–{number(r['golden_ci_high'], 2)}" if r["n_golden"] else "–",
             _percent(r["fast_rate"]), r["status"].replace("_", " "), markdown_text("; ".join(r["reasons"])) or "–"]
            for r in _annotator_rows(q)]
    lines += [markdown_table(["Annotator", "Votes", "Golden", "Accuracy", ci, "Fast", "Status", "Reasons"], rows,
                             "lrrrrrll"), ""]
    lines += agreement_markdown(report.agreement, max_pairs)
    if report.screen is not None:
        lines += screen_markdown(report.screen, "screen" in report.request.get("annotator_policy", {}).get(
            "qualification_rules", ()))
    eff = report.exclusion_effect
    lines += ["## Excluding the unqualified", ""]
    if not eff.get("available", False):
        lines.append(f"Not available: {markdown_text(eff.get('reason', 'no ranking'))}")
    elif not eff["unqualified_annotators"]:
        lines.append("No annotator is unqualified: the ranking is unchanged.")
    elif eff["policy"] == "keep":
        lines.append(f"Annotator policy keep: the votes of the {len(eff['unqualified_annotators'])} unqualified "
                     "annotators stay in every analysis (choose --policy exclude or downweight to leave them out).")
    else:
        what = (f"Excluding {len(eff['unqualified_annotators'])} annotators ({eff['judgements_left_out']} judgements)"
                if eff["policy"] == "exclude" else
                f"Counting the {eff['judgements_down_weighted']} judgements of {len(eff['unqualified_annotators'])} "
                "annotators at half weight")
        lines.append(f"{what} changes the BT rank of {len(eff['rank_changes'])} of {eff['n_models']} models.")
        if eff["rank_changes"]:
            lines += ["", markdown_table(["Model", "Rank before", "Rank after", "Elo before", "Elo after"],
                                         [[markdown_text(c["model"]), c["rank_before"],
                                           "–" if c["rank_after"] is None else c["rank_after"],
                                           number(c["rating_before"], 0), number(c["rating_after"], 0)]
                                          for c in eff["rank_changes"]], "lrrrr")]
    return "\n".join(lines) + "\n"


def screen_sentence(screen: ScreenResult) -> str:
    """What the sequential screen did, in one paragraph (markdown and the Annotators page)."""
    return (f"Each annotator's votes, in time order, against the Bradley–Terry fit of the {screen.n_votes:,} "
            "screened votes (golden questions apart): a running likelihood ratio of \"votes by the model only with "
            "reliability η < 1\" (η = 0: against the model; η = ½: at random) to \"votes by the model\", stopped "
            f"when it reaches 1/α = {1 / screen.alpha:g}. By Ville's inequality an honest annotator is flagged "
            f"with probability at most α = {screen.alpha:g}, however many votes they cast; ties leave the ratio "
            "unchanged (docs/methods.md §17).")


def screen_markdown(screen: ScreenResult, applied: bool = False) -> list[str]:
    """The "Sequential screen" section: who was flagged, at which of their votes."""
    lines = ["## Sequential screen", ""]
    if screen.reason is not None:
        return lines + [f"Not available: {markdown_text(screen.reason)}.", ""]
    flagged = screen.annotators[screen.annotators["flagged"]]
    lines += [screen_sentence(screen), "",
              f"{len(flagged)} of {len(screen.annotators)} annotators flagged" + (
                  ": they count as unqualified (qualification rule screen)." if applied and len(flagged) else
                  " (they count as unqualified only with --qualify golden,fast,screen)." if len(flagged) else ".")]
    if len(flagged):
        lines += ["", markdown_table(["Annotator", "Votes", "Flagged at vote", "log LR there"],
                                     [[markdown_text(r["annotator_id"]), r["votes_seen"], r["flagged_at_vote"],
                                       number(r["log_lr"], 2)] for r in flagged.to_dict("records")], "lrrr")]
    return lines + [""]


# ---------------------------------------------------------------- the Annotators page's tables


def screen_table(screen: ScreenResult) -> pd.DataFrame:
    """The flagged annotators for display, earliest flag first."""
    flagged = screen.annotators[screen.annotators["flagged"]].sort_values(["flagged_at_vote", "annotator_id"])
    return pd.DataFrame({"Annotator": flagged["annotator_id"], "Votes": flagged["votes_seen"],
                         "Decisive votes": flagged["decisive"], "Flagged at vote": flagged["flagged_at_vote"],
                         "log LR at flag": flagged["log_lr"], "Highest log LR": flagged["max_log_lr"]})

def quality_table(quality: pd.DataFrame) -> pd.DataFrame:
    """The quality frame for display: accuracy, CI and fast rate as text, "–" where an annotator has no
    golden answers or no timings."""
    return pd.DataFrame({
        "Annotator": quality["annotator_id"].astype(str), "Status": quality["status"].str.replace("_", " "),
        "Votes": quality["n_votes"], "Golden": quality["n_golden"],
        "Golden accuracy": quality["golden_accuracy"].map(coefficient),
        "Golden CI": [_interval(lo, hi) for lo, hi in zip(quality["golden_ci_low"], quality["golden_ci_high"])],
        "Fast rate": quality["fast_rate"].map(lambda v: "–" if not np.isfinite(v) else f"{v:.1%}"),
        "Reasons": ["; ".join(r) for r in quality["reasons"]]})


def coefficient(value) -> str:
    """Three decimals; "–" where the statistic is not computable."""
    return "–" if value is None or not np.isfinite(value) else f"{value:.3f}"


def _interval(lo: float, hi: float) -> str:
    return "–" if not (np.isfinite(lo) and np.isfinite(hi)) else f"{lo:.3f}–{hi:.3f}"


def comparison_table(comparison: PolicyComparison) -> pd.DataFrame:
    """Model × (rank, Elo) with every vote and after the annotator policy, ranked after the policy first
    (models it left without votes last)."""
    frame = pd.DataFrame([{"Model": r.model, "Rank (all votes)": r.rank_before, "Elo (all votes)": r.rating_before,
                           "Rank (qualified only)": r.rank_after, "Elo (qualified only)": r.rating_after,
                           "Rank change": None if r.rank_after is None else r.rank_before - r.rank_after}
                          for r in comparison.rows],
                         columns=["Model", "Rank (all votes)", "Elo (all votes)", "Rank (qualified only)",
                                  "Elo (qualified only)", "Rank change"])
    frame = frame.sort_values(["Rank (qualified only)", "Model"], na_position="last")
    return frame.astype({"Rank (qualified only)": "Int64", "Rank change": "Int64"})


def kappa_table(agreement: dict[str, Any]) -> pd.DataFrame:
    """Cohen's κ of every annotator pair with shared items, as shown."""
    return pd.DataFrame(agreement["cohen_kappa"]).rename(columns={
        "annotator_1": "Annotator 1", "annotator_2": "Annotator 2", "n_items": "Shared items", "kappa": "κ"})
