"""JSON and markdown renderings of a :class:`core.bias.diagnose.BiasReport` (``evalboard bias``).

``report_dict`` is the docs/design.md "CLI" contract of ``bias --format json``: every contract key is always
present for an available test, so scripts can rely on them; a test that could not run is
``{"available": false, "reason": ...}``. A few documented extras ride along (``verdict`` on every
test, ``n_golden``, ``alpha``, the IPW position score test, ``corrections``).
"""

from __future__ import annotations

from typing import Any

from core.bias.corrections import Corrections
from core.bias.diagnose import PRACTICAL_SHARE, BiasReport, LengthTest, OrderTest, PositionTest, TableTest, Unavailable
from core.formats import dumps, markdown_table, markdown_text, p_value, undefined_as_null
from core.formats import number as _number
from core.stats.significance import Binomial, PairingTest, TwoProportions

TESTS = ("position", "order", "model_position", "time_exposure", "length", "pairing", "ipw")
# When the length test finds that length matters: where the ranking with length held equal is
# (scheme style, docs/methods.md §11).
STYLE_POINTER = ("Rank with scheme style (`evalboard rank VOTES --scheme style`, or Style-controlled BT on the "
                 "Rankings page) to see the ranking with length held equal.")


def length_matters(report: BiasReport) -> bool:
    """The length test ran and found a length effect at the report's α."""
    return isinstance(report.length, LengthTest) and report.length.detected


def report_dict(report: BiasReport, prepared=None) -> dict[str, Any]:
    """The contract; a statistic a test could not compute is null, its block's verdict (or counts) say why.
    ``prepared`` (core.ranking.request.PreparedVotes) adds the request: items and judgements, the dimension
    analysed and the annotator policy."""
    out: dict[str, Any] = {"n_votes": report.n_votes, "n_golden": report.n_golden, "alpha": report.alpha}
    if prepared is not None:
        out.update(prepared.as_dict())
    for name in TESTS:
        out[name] = _block(getattr(report, name))
    if report.corrections is not None:
        out["corrections"] = _corrections(report.corrections)
    return undefined_as_null(out)


def to_json(report: BiasReport, prepared=None) -> str:
    return dumps(report_dict(report, prepared))


def _binomial(t: Binomial) -> dict[str, Any]:
    return {"k": t.k, "n": t.n, "share": t.share, "p_value": t.p_value}


def _two(t: TwoProportions | None) -> dict[str, Any] | None:
    if t is None:
        return None
    return {"early_k": t.x1, "early_n": t.n1, "late_k": t.x2, "late_n": t.n2, "z": t.z, "p_value": t.p_value,
            "chi2": t.chi2, "fisher_p": t.fisher_p}


def _judged(test) -> dict[str, Any]:
    """Effect size next to the p-value: ``effect`` on the share scale, ``detected`` (p < alpha) and
    ``practical`` (detected and |effect| ≥ ``practical_threshold``)."""
    return {"effect": test.effect, "detected": test.detected, "practical": test.practical,
            "practical_threshold": PRACTICAL_SHARE}


def _block(test) -> dict[str, Any]:
    return _block_fields(test) | (_judged(test) if isinstance(test, (PositionTest, OrderTest, TableTest, LengthTest))
                                  else {})


def _block_fields(test) -> dict[str, Any]:
    if isinstance(test, Unavailable):
        return {"available": False, "reason": test.reason}
    if isinstance(test, PositionTest):
        return {**_binomial(test.test), "ci_low": test.test.ci_low, "ci_high": test.test.ci_high,
                "verdict": test.verdict, "ipw_share": test.ipw_share, "ipw_n_eff": test.ipw_n_eff,
                "ipw_z": test.ipw_z, "ipw_p_value": test.ipw_p_value}
    if isinstance(test, OrderTest):
        return {"n_annotators": test.n_annotators, "decisive": _two(test.decisive), "accuracy": _two(test.accuracy),
                "accuracy_source": test.accuracy_source, "ordered_by": test.ordered_by, "verdict": test.verdict}
    if isinstance(test, TableTest):
        return {"chi2": test.chi2, "df": test.df, "p_value": test.p_value, "p0": test.p0, "verdict": test.verdict,
                "per_model": [{"model": r.model, **_binomial(r.test), "p_holm": r.p_holm,
                               "ci_low": r.test.ci_low, "ci_high": r.test.ci_high} for r in test.per_model]}
    if isinstance(test, LengthTest):
        fit = test.fit
        return {**_binomial(test.test), "beta": fit.beta[1], "beta_se": fit.se[1], "beta_p": fit.p[1],
                "intercept": fit.beta[0], "intercept_se": fit.se[0], "intercept_p": fit.p[0], "fit_flag": fit.flag,
                "verdict": test.verdict}
    if isinstance(test, PairingTest):
        return {"chi2": test.chi2, "df": test.df, "p_value": test.p_value, "n_pairs": test.n_pairs,
                "zero_pairs": test.zero_pairs, "verdict": test.verdict}
    return {"n_eff": test.n_eff, "design_effect": test.design_effect, "empty_cells": test.empty_cells,
            "grid_cells": test.grid_cells, "truncated": test.truncated}


def _corrections(c: Corrections | Unavailable) -> dict[str, Any]:
    if isinstance(c, Unavailable):
        return {"available": False, "reason": c.reason}
    return {"strict": c.strict, "models": [
        {"model": r.model, "n_votes": r.n_votes, "raw_win_rate": r.raw_win_rate,
         "stratified_win_rate": r.stratified_win_rate, "strata_used": r.strata_used, "elo": r.elo,
         "ipw_elo": r.ipw_elo, "rank_raw": r.rank_raw, "rank_stratified": r.rank_stratified, "rank_bt": r.rank_bt,
         "rank_ipw": r.rank_ipw, "rank_changed": r.rank_changed} for r in c.rows]}


# ---------------------------------------------------------------- markdown

_TITLES = {"position": "Position (left vs right)", "order": "Order within a session", "model_position":
           "Model position", "time_exposure": "Time exposure", "length": "Length", "pairing": "Pairing uniformity"}


def to_markdown(report: BiasReport, prepared=None, style_pointer: bool = True) -> str:
    """The diagnostics as markdown; ``style_pointer``: when length matters, its line says where the ranking
    with length held equal is (the votes report, which has its own style section, leaves it out)."""
    lines = ["# Bias diagnostics", "",
             f"{report.n_votes} votes analysed ({report.n_golden} golden-question votes left out); "
             f"tests at α = {report.alpha}.", ""]
    if prepared is not None:
        lines[2] = markdown_text(". ".join(prepared.lines())) + f"; tests at α = {report.alpha}."
    for name, title in _TITLES.items():
        test = getattr(report, name)
        text = f"not available: {test.reason}" if isinstance(test, Unavailable) else test.verdict
        pointer = f" {STYLE_POINTER}" if name == "length" and style_pointer and length_matters(report) else ""
        lines.append(f"- **{title}:** {markdown_text(text)}{pointer}")
    ipw = report.ipw
    if not isinstance(ipw, Unavailable):
        lines.append(f"- **IPW design:** effective sample size {ipw.n_eff:.0f} (design effect "
                     f"{ipw.design_effect:.2f}), {ipw.empty_cells} of {ipw.grid_cells} cells empty "
                     "(no weighting can repair those).")
    for name, first in (("model_position", "Left"), ("time_exposure", "Early")):
        test = getattr(report, name)
        if isinstance(test, TableTest) and test.per_model:
            lines += ["", f"## {_TITLES[name]} per model", "",
                      markdown_table(["Model", first, "N", "Share", "95% CI", "p", "p (Holm)"],
                                     [[markdown_text(r.model), r.test.k, r.test.n, number(r.test.share, 2),
                                       f"{number(r.test.ci_low, 2)}-{number(r.test.ci_high, 2)}",
                                       p_value(r.test.p_value), p_value(r.p_holm)] for r in test.per_model],
                                     "lrrrlrr")]
    c = report.corrections
    if isinstance(c, Corrections):
        lines += ["", "## Raw vs corrected", "",
                  markdown_table(["Model", "Win rate", "Stratified", "Elo", "IPW Elo", "Rank (BT → IPW)", "Changed"],
                                 [[markdown_text(r.model), number(r.raw_win_rate, 3), number(r.stratified_win_rate, 3),
                                   number(r.elo, 0), number(r.ipw_elo, 0), f"{r.rank_bt} → {r.rank_ipw}",
                                   "yes" if r.rank_changed else ""] for r in c.rows], "lrrrrll")]
    return "\n".join(lines) + "\n"


def number(value: float, digits: int) -> str:
    """A test statistic to ``digits``; "–" where the test could not compute it (the verdict says why)."""
    return _number(undefined_as_null(value), digits)

