"""Column-level parsing shared by all loaders: mapping names, and turning text cells into typed values.

Each parser records a :class:`~core.io.problems.Problem` for every cell it cannot read instead of
guessing, and works on the distinct values of a column (``pandas.factorize``) so that a million rows
with a dozen model names cost a dozen checks.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from core.io.problems import ProblemList
from core.schema import OUTCOME_ALIASES, OUTCOMES

# Control characters and everything that ends a line somewhere: C0, DEL, C1 (U+0085 NEL among them) and the
# Unicode line and paragraph separators U+2028/U+2029 (str.splitlines, browsers and JSON tools break on them).
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
# Spellings of "no value" in number columns (R, pandas, spreadsheets). In name columns they stay names.
MISSING_MARKERS = frozenset({"", "na", "n/a", "nan", "null", "none", "#n/a", "-"})


def map_columns(frame: pd.DataFrame, mapping: Mapping[str, str] | None, aliases: Mapping[str, str],
                canonical: tuple[str, ...], problems: ProblemList, also_used: tuple[str, ...] = ()
                ) -> tuple[pd.DataFrame, list[str]]:
    """Rename source columns onto canonical names: explicit mapping first, then known aliases.

    Returns the renamed frame (canonical columns only) and notes saying what was read as what and
    which columns were left out.
    """
    notes: list[str] = []
    rename: dict[str, str] = {}
    for target, source in (mapping or {}).items():
        if target not in canonical:
            problems.add((), f"the column mapping names {target!r}, which is not a column EvalBoard reads "
                             f"(one of: {', '.join(canonical)})")
        elif source not in frame.columns:
            problems.add((source,), f"the column mapping reads {target!r} from {source!r}, but the file has no "
                                    f"such column (it has: {', '.join(map(str, frame.columns))})")
        else:
            rename[source] = target
    taken = set(rename.values()) | {c for c in frame.columns if c in canonical and c not in rename}
    for source, target in aliases.items():
        if source in frame.columns and source not in rename and target not in taken:
            rename[source] = target
            taken.add(target)
            notes.append(f"column '{source}' read as {target}")
    kept = dict(rename)
    for col in frame.columns:
        if col in canonical and col not in kept and col not in kept.values():
            kept[col] = col
    ignored = [c for c in frame.columns if c not in kept and c not in also_used]
    if ignored:
        notes.append("columns not used: " + ", ".join(map(str, ignored[:12])) + (" …" if len(ignored) > 12 else ""))
    out = frame[list(kept)].rename(columns=kept)
    return out, notes


def text_values(series: pd.Series) -> pd.Series:
    """Cells as strings with missing values kept missing (JSON numbers become their decimal text)."""
    if isinstance(series.dtype, pd.StringDtype) or pd.api.types.is_string_dtype(series.dtype):
        if series.dtype == object:
            return series.map(lambda v: v if v is None or isinstance(v, str) or _missing(v) else str(v)).astype("str")
        return series
    return series.map(lambda v: None if _missing(v) else _number_text(v)).astype("str")


def _number_text(value) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _missing(value) -> bool:
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def parse_names(series: pd.Series, column: str, problems: ProblemList, required: bool,
                category: bool = False) -> pd.Series | pd.Categorical:
    """Identifiers (model, annotator, query …): one line of text, no stray spaces at either end.

    With ``category`` the result is a Categorical with sorted categories, built from the same
    factorisation the checks use (a million-row label column is hashed once, not twice).
    """
    structured = None
    if series.dtype == object:  # JSON lists and objects are not names (their text would pass as one)
        structured = series.map(lambda v: isinstance(v, (list, dict))).to_numpy(dtype=bool)
        if structured.any():
            problems.add(column, f"{column} holds a JSON list or object, not a name", structured, series)
            series = series.where(~structured, None)
        else:
            structured = None
    values = text_values(series)
    codes, uniques = pd.factorize(values, sort=category)
    uniq = pd.Series(uniques, dtype="str")
    blank = (uniq.str.strip() == "").to_numpy()
    padded = (uniq != uniq.str.strip()).to_numpy() & ~blank
    control = uniq.str.contains(_CONTROL).to_numpy()
    empty_rows = codes < 0
    if blank.any():
        empty_rows |= np.isin(codes, np.flatnonzero(blank))
    if structured is not None:
        empty_rows &= ~structured  # reported above
    if required:
        problems.add(column, f"empty {column}", empty_rows, values)
    elif blank.any():
        problems.add(column, f"{column} holds only spaces", np.isin(codes, np.flatnonzero(blank)), values)
    if padded.any():
        problems.add(column, f"{column} starts or ends with spaces (would be a different name)",
                     np.isin(codes, np.flatnonzero(padded)), values)
    if control.any():
        problems.add(column, f"{column} holds a line break or control character",
                     np.isin(codes, np.flatnonzero(control)), values)
    if category:
        return pd.Categorical.from_codes(codes, categories=pd.Index(uniques, dtype="str"))
    return values


DROP = "drop"  # outcome-mapping target: leave these rows out (counted in the dataset's notes)
EMPTY_KEY = ""  # outcome-mapping key for empty winner cells (CLI: --outcome =drop, --outcome =tie)
_THRESHOLD = re.compile(r"^\s*([<>])\s*(-?(?:\d+\.?\d*|\.\d+)(?:e-?\d+)?)\s*$", re.IGNORECASE)


def outcome_rule(key: str) -> tuple[str, float] | None:
    """``'>1.5'`` -> ('>', 1.5): a threshold key of an outcome mapping (numeric winner columns)."""
    found = _THRESHOLD.match(str(key))
    return (found.group(1), float(found.group(2))) if found else None


def _as_number(text: str) -> float | None:
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return value if np.isfinite(value) else None


def resolve_outcome(value: str, user: Mapping[str, str]) -> str | None:
    """What one distinct winner value means: the user's exact value, the same number, a threshold
    (``<x``/``>x``), then the documented aliases; None when nothing says."""
    key = value.strip().lower()
    if key in user:
        return user[key]
    number = _as_number(key)
    if number is not None:
        for k, target in user.items():
            if outcome_rule(k) is None and _as_number(k) == number:
                return target
        for k, target in user.items():
            rule = outcome_rule(k)
            if rule and ((rule[0] == "<" and number < rule[1]) or (rule[0] == ">" and number > rule[1])):
                return target
    return OUTCOME_ALIASES.get(key)


def parse_outcomes(series: pd.Series, column: str, problems: ProblemList,
                   outcomes: Mapping[str, str] | None = None, allow_missing: bool = False) -> pd.Categorical:
    """Winner labels -> the canonical OUTCOMES; user mapping first, then the documented aliases."""
    return parse_outcomes_and_drops(series, column, problems, outcomes, allow_missing)[0]


def parse_outcomes_and_drops(series: pd.Series, column: str, problems: ProblemList,
                             outcomes: Mapping[str, str] | None = None, allow_missing: bool = False
                             ) -> tuple[pd.Categorical, np.ndarray]:
    """:func:`parse_outcomes` plus the rows the mapping sends to ``drop`` (their outcome is missing).

    The mapping's key ``''`` names empty cells; ``<x`` / ``>x`` keys are thresholds for numeric labels.
    """
    values = text_values(series)
    codes, uniques = pd.factorize(values)
    user = {str(k).strip().lower(): v for k, v in (outcomes or {}).items()}
    for key, target in list(user.items()):
        wanted = str(target).strip().lower()
        canon = DROP if wanted == DROP else OUTCOME_ALIASES.get(wanted)
        if canon is None:
            problems.add(column, f"the outcome mapping sends {key!r} to {target!r}; map values to one of "
                                 f"{', '.join(OUTCOMES)} (or a, b, tie, both_bad) or to {DROP!r}")
            user.pop(key)
        else:
            user[key] = canon
    resolved = [resolve_outcome(str(value), user) for value in uniques]
    unknown = np.array([r is None for r in resolved], dtype=bool)
    label_codes = np.array([OUTCOMES.index(r) if r in OUTCOMES else -1 for r in resolved], dtype=np.int8)
    dropped_values = np.array([r == DROP for r in resolved], dtype=bool)
    out_codes = np.where(codes >= 0, label_codes[np.maximum(codes, 0)] if len(uniques) else -1, -1)
    dropped = (codes >= 0) & (dropped_values[np.maximum(codes, 0)] if len(uniques) else False)
    empty = codes < 0
    empty_means = user.get(EMPTY_KEY)
    if empty_means == DROP:
        dropped = dropped | empty
    elif empty_means is not None:
        out_codes = np.where(empty, OUTCOMES.index(empty_means), out_codes)
    if unknown.any():
        problems.add(column, f"unknown {column} label (accepted: {', '.join(OUTCOMES)}; a/b, left/right, A/B, "
                             "1/2, draw, both_bad, bothbad; or give an outcome mapping)",
                     np.isin(codes, np.flatnonzero(unknown)), values)
    if not allow_missing and empty_means is None:
        problems.add(column, f"empty {column} (map empty cells to an outcome or drop them: --outcome =tie, "
                             "--outcome =drop)", empty, values)
    return pd.Categorical.from_codes(out_codes.astype(np.int8), categories=list(OUTCOMES)), np.asarray(dropped)


def parse_numbers(series: pd.Series, column: str, problems: ProblemList, *, minimum: float | None = None,
                  maximum: float | None = None, allow_missing: bool = True) -> np.ndarray:
    """Numbers as float64; text that is not a number, NaN/inf, and values out of range are reported."""
    if pd.api.types.is_bool_dtype(series.dtype):
        problems.add(column, f"{column} must be a number, not true/false", np.ones(len(series), bool))
        return np.full(len(series), np.nan)
    raw_missing = series.isna().to_numpy()
    if pd.api.types.is_numeric_dtype(series.dtype):
        numbers = series.to_numpy(dtype=np.float64, na_value=np.nan, copy=True)
    else:
        text = text_values(series)
        numbers = _fast_float(text)
        if numbers is None:  # some cell is not plain decimal text: find which, cell by cell
            stripped = text.str.strip()
            raw_missing = raw_missing | stripped.str.lower().isin(MISSING_MARKERS).to_numpy()
            numbers = pd.to_numeric(stripped, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan, copy=True)
        else:  # the cast read "nan"/"NaN" as NaN: a missing-value marker like NA
            raw_missing = raw_missing | np.isnan(numbers)
    bad = ~raw_missing & ~np.isfinite(numbers)  # "inf" and text that is not a number
    problems.add(column, f"{column} is not a finite number", bad, series)
    if not allow_missing:
        problems.add(column, f"empty {column} (or NA)", raw_missing, series)
    ok = np.isfinite(numbers)
    if minimum is not None:
        problems.add(column, f"{column} below {minimum:g}", ok & (numbers < minimum), series)
    if maximum is not None:
        problems.add(column, f"{column} above {maximum:g}", ok & (numbers > maximum), series)
    numbers[bad] = np.nan
    return numbers


def _fast_float(text: pd.Series) -> np.ndarray | None:
    """Arrow's vectorised cast (about 10x pandas' to_numeric); None when any cell does not parse."""
    try:
        return pc.cast(pa.array(text, type=pa.string(), from_pandas=True), pa.float64()).to_numpy(
            zero_copy_only=False).copy()
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return None


_TRUE = {"true", "1", "yes", "y", "t"}
_FALSE = {"false", "0", "no", "n", "f", ""}


def parse_flags(series: pd.Series, column: str, problems: ProblemList) -> np.ndarray:
    """Booleans from true/false, 1/0, yes/no (case-insensitive); an empty cell means false."""
    if pd.api.types.is_bool_dtype(series.dtype) and not series.isna().any():
        return series.to_numpy(dtype=bool)
    values = text_values(series)
    codes, uniques = pd.factorize(values.str.strip().str.lower())
    truth = np.array([u in _TRUE for u in uniques], dtype=bool)
    known = np.array([u in _TRUE or u in _FALSE for u in uniques], dtype=bool)
    problems.add(column, f"{column} must be true/false, 1/0 or yes/no",
                 (codes >= 0) & ~known[np.maximum(codes, 0)] if len(uniques) else np.zeros(len(codes), bool), values)
    return (codes >= 0) & truth[np.maximum(codes, 0)] if len(uniques) else np.zeros(len(codes), bool)


# The dates a datetime64[ns] holds (1677-09-21 .. 2262-04-11), to whole days: analyses and the store
# work in nanosecond datetimes, so a later or earlier instant is refused instead of overflowing.
_FIRST_SECOND = pd.Timestamp("1677-09-22", tz="UTC").timestamp()
_LAST_SECOND = pd.Timestamp("2262-04-11", tz="UTC").timestamp()
# Epoch numbers in a finer unit than seconds lie far outside that range; divided by the unit they fit.
_FINER_UNITS = (("milliseconds", 1e3, "1,000"), ("microseconds", 1e6, "1,000,000"),
                ("nanoseconds", 1e9, "1,000,000,000"))


def parse_timestamps(series: pd.Series, column: str, problems: ProblemList) -> pd.Series:
    """ISO-8601 text (UTC unless an offset is given) or epoch seconds -> UTC datetimes (microseconds).

    Every cell becomes epoch seconds first, so that a date outside what the analyses can hold is reported
    by row (with a word when the number looks like epoch milliseconds) instead of overflowing.
    """
    missing = series.isna().to_numpy()
    numeric = np.ones(len(series), dtype=bool)  # rows read as epoch numbers (a finer unit may be meant)
    if pd.api.types.is_datetime64_any_dtype(series.dtype):
        seconds, numeric[:] = _seconds_of(series), False
    elif pd.api.types.is_numeric_dtype(series.dtype) and not pd.api.types.is_bool_dtype(series.dtype):
        seconds = series.to_numpy(dtype=np.float64, na_value=np.nan, copy=True)
    else:
        text = text_values(series).str.strip()
        missing = missing | text.str.lower().isin(MISSING_MARKERS).to_numpy()
        seconds = _fast_float(text)
        if seconds is None:  # ISO text, possibly mixed with epoch numbers: parse as ISO, then the rest as numbers
            iso = pd.to_datetime(text, format="ISO8601", utc=True, errors="coerce")
            parsed = iso.notna().to_numpy()
            seconds = np.full(len(series), np.nan)
            seconds[parsed], numeric[parsed] = _seconds_of(iso[parsed]), False
            rest = ~missing & ~parsed
            if rest.any():
                seconds[rest] = pd.to_numeric(text[rest], errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    seconds[missing] = np.nan
    unreadable = ~missing & np.isnan(seconds)
    problems.add(column, f"{column} is not an ISO-8601 date-time or epoch seconds", unreadable, series)
    in_range = (seconds >= _FIRST_SECOND) & (seconds <= _LAST_SECOND)  # False for NaN and ±inf
    outside = ~missing & ~unreadable & ~in_range
    for unit, factor, spelled in _FINER_UNITS:
        finer = outside & numeric & (np.abs(seconds / factor) <= _LAST_SECOND)
        problems.add(column, f"{column} looks like epoch {unit}, not seconds (divide by {spelled})", finer, series)
        outside &= ~finer
    problems.add(column, f"{column} lies outside the dates EvalBoard can hold (1677-09-22 to 2262-04-11)",
                 outside, series)
    seconds[~in_range] = np.nan
    out = pd.Series(pd.to_datetime(seconds, unit="s", utc=True), index=series.index)
    return out.dt.as_unit("ns").dt.round("us")  # the store keeps float seconds: microseconds survive


def _seconds_of(datetimes: pd.Series) -> np.ndarray:
    """Epoch seconds of datetimes in any unit (a Parquet column may hold microseconds beyond 2262)."""
    values = datetimes
    if getattr(values.dt, "tz", None) is not None:
        values = values.dt.tz_convert("UTC").dt.tz_localize(None)
    micros = values.to_numpy().astype("datetime64[us]")
    out = micros.astype(np.int64).astype(np.float64) / 1e6
    out[np.isnat(micros)] = np.nan
    return out
