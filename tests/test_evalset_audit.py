"""The build audit's stage table and notes (core.evalset.audit), which the Eval set page shows as they are."""

from __future__ import annotations

from core.evalset.audit import Audit, StageRecord


def test_the_audit_table_and_notes_per_stage():
    audit = Audit()
    audit.add(StageRecord("dedup", 1200, 1150, "offline", dropped={"duplicate": 40, "empty": 10}, notes=["kept first"]))
    audit.add(StageRecord("classify", 1150, 1149, "model", dropped={"failed": 1}, calls={"calls": 1150, "failed": 1}))
    assert audit.stage_rows() == [
        {"stage": "dedup", "method": "offline", "in": 1200, "out": 1150, "dropped": "duplicate: 40; empty: 10",
         "model calls": 0, "failed calls": 0},
        {"stage": "classify", "method": "model", "in": 1150, "out": 1149, "dropped": "failed: 1",
         "model calls": 1150, "failed calls": 1}]
    assert audit.stage_notes() == ["dedup: kept first"]


def test_an_audit_without_stages_has_no_rows():
    assert Audit().stage_rows() == [] and Audit().stage_notes() == []
