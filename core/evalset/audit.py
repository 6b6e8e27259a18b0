"""The audit of a build: for every stage, the queries in and out, why each dropped query was dropped,
how (model or offline rule) and what the model calls cost. Written as JSON and markdown."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

# What each automatic check makes sure of (passed), and what its offending ids are (failed).
CHECK_WORDING = {
    "duplicate_selected": ("no duplicate selected", "duplicates selected"),
    "excluded_category_selected": ("no query from an excluded category", "queries from excluded categories"),
    "classification_failed_selected": ("no query whose classification failed",
                                       "queries whose classification failed"),
    "invalid_status_selected": ("no query with an invalid status", "queries with an invalid status"),
}


LENGTHS = "prompt_length_chars"  # the selection's length distribution: group -> length_summary
LENGTH_COLUMNS = (("n", "n"), ("min", "min"), ("p10", "10 %"), ("p25", "25 %"), ("p50", "median"), ("p75", "75 %"),
                  ("p90", "90 %"), ("max", "max"))


def length_table(distribution: dict[str, dict[str, int]], style: str = " ") -> list[str]:
    """The length distribution (eligible, chosen, reserves) as a markdown table (``style="|"``) or as
    aligned plain-text lines."""
    head = ["", *(label for _, label in LENGTH_COLUMNS)]
    rows = [[group, *(f"{d[key]:,}" if key in d else "—" for key, _ in LENGTH_COLUMNS)]
            for group, d in distribution.items()]
    if style == "|":
        return ["| " + " | ".join(head) + " |", "|---|" + "---:|" * len(LENGTH_COLUMNS),
                *("| " + " | ".join(r) + " |" for r in rows)]
    widths = [max(len(str(r[i])) for r in [head, *rows]) for i in range(len(head))]
    return ["  ".join(str(c).rjust(w) if i else str(c).ljust(w) for i, (c, w) in enumerate(zip(r, widths)))
            for r in [head, *rows]]


@dataclass
class StageRecord:
    stage: str
    n_in: int
    n_out: int
    method: str  # "model", "offline", "given", …
    dropped: dict[str, int] = field(default_factory=dict)  # reason -> count
    notes: list[str] = field(default_factory=list)
    calls: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {"stage": self.stage, "in": self.n_in, "out": self.n_out, "method": self.method,
                "dropped": self.dropped, "notes": self.notes, "calls": self.calls}


@dataclass
class Audit:
    stages: list[StageRecord] = field(default_factory=list)
    settings: dict = field(default_factory=dict)
    checks: dict = field(default_factory=dict)
    selection: dict = field(default_factory=dict)

    def add(self, record: StageRecord) -> StageRecord:
        self.stages = [s for s in self.stages if s.stage != record.stage] + [record]  # a rerun replaces
        return record

    def as_dict(self) -> dict:
        return {"settings": self.settings, "stages": [s.as_dict() for s in self.stages],
                "selection": self.selection, "checks": self.checks}

    def to_json(self) -> str:
        return json.dumps(self.as_dict(), indent=2, ensure_ascii=False, default=str)

    def stage_rows(self) -> list[dict]:
        """One row per stage for a table: counts in and out, drops as ``reason: count; …``, model calls."""
        return [{"stage": s.stage, "method": s.method, "in": s.n_in, "out": s.n_out,
                 "dropped": "; ".join(f"{k}: {v:,}" for k, v in s.dropped.items()),
                 "model calls": s.calls.get("calls", 0), "failed calls": s.calls.get("failed", 0)}
                for s in self.stages]

    def stage_notes(self) -> list[str]:
        """Every stage's notes, each as ``stage: note``."""
        return [f"{s.stage}: {n}" for s in self.stages for n in s.notes]

    def to_markdown(self) -> str:
        lines = ["# Eval-set build audit", ""]
        if self.settings:
            lines += ["## Settings", ""] + [f"- {k}: {_md(v)}" for k, v in self.settings.items()] + [""]
        lines += ["## Stages", "", "| Stage | Method | In | Out | Dropped (reason: count) | Model calls (failed) |",
                  "|---|---|---:|---:|---|---|"]
        for s in self.stages:
            dropped = "; ".join(f"{_md(k)}: {v:,}" for k, v in s.dropped.items()) or "—"
            calls = f"{s.calls.get('calls', 0):,} ({s.calls.get('failed', 0):,})" if s.calls else "—"
            lines.append(f"| {s.stage} | {s.method} | {s.n_in:,} | {s.n_out:,} | {dropped} | {calls} |")
        notes = [(s.stage, n) for s in self.stages for n in s.notes]
        if notes:
            lines += ["", "## Notes", ""] + [f"- {stage}: {_md(n)}" for stage, n in notes]
        if self.selection:
            lines += ["", "## Selection", ""]
            for k, v in self.selection.items():
                if k != LENGTHS:
                    lines.append(f"- {k}: {_md(v)}")
            if self.selection.get(LENGTHS):
                lines += ["", "## Prompt length (characters)", "", *length_table(self.selection[LENGTHS], "|")]
        if self.checks:
            lines += ["", "## Automatic checks", ""]
            for k, v in self.checks.items():
                good, bad = CHECK_WORDING.get(k, (k, k))
                lines.append(f"- {good}: passed" if v == "passed" else f"- {bad}: {_md(v)}")
        return "\n".join(lines) + "\n"


def _md(value) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str) if isinstance(value, (dict, list)) else str(value)
    return text.replace("|", "\\|")
