"""evalboard annotators and evalboard bias: the JSON contracts of docs/design.md "CLI", exit statuses."""

from __future__ import annotations

import json

from core.cli import main
from core.samples import RANDOM_CLICKERS
from core.samples.demo import SAMPLES_DIR

ARENA = str(SAMPLES_DIR / "arena_demo.csv")


def test_annotators_json_contract(capsys):
    assert main(["annotators", ARENA]) == 0
    report = json.loads(capsys.readouterr().out)
    assert {"annotators", "agreement"} <= set(report)
    first = report["annotators"][0]
    assert set(first) >= {"annotator_id", "n_votes", "n_golden", "golden_accuracy", "golden_ci_low",
                          "golden_ci_high", "fast_rate", "status", "reasons"}
    assert {"n_items", "krippendorff_alpha", "fleiss_kappa", "cohen_kappa"} <= set(report["agreement"])
    status = {a["annotator_id"]: a["status"] for a in report["annotators"]}
    assert all(status[c] == "unqualified" for c in RANDOM_CLICKERS)  # docs/methods.md §7: > 30% answers under 3 s
    assert set(status.values()) <= {"qualified", "unqualified", "not_evaluable"}


def test_annotators_markdown_and_output_file(tmp_path):
    out = tmp_path / "annotators.md"
    assert main(["annotators", ARENA, "--format", "markdown", "--output", str(out)]) == 0
    text = out.read_text()
    assert "| Annotator |" in text and "unqualified" in text


def test_diagnostics_need_votes(capsys):
    for command in ("annotators", "bias"):
        assert main([command, str(SAMPLES_DIR / "evalruns_demo.csv")]) == 2
        assert "need individual votes" in capsys.readouterr().err


def test_missing_input_exits_2(tmp_path, capsys):
    assert main(["annotators", str(tmp_path / "nope.csv"), "--db", str(tmp_path / "x.db")]) == 2
    assert "no such file, and no stored dataset" in capsys.readouterr().err


def test_bias_json_contract_and_planted_biases(capsys):
    assert main(["bias", ARENA]) == 0
    report = json.loads(capsys.readouterr().out)
    assert {"n_votes", "position", "order", "model_position", "time_exposure", "length", "pairing",
            "ipw"} <= set(report)
    assert {"k", "n", "share", "p_value", "ci_low", "ci_high", "verdict"} <= set(report["position"])
    assert {"chi2", "df", "p_value", "per_model"} <= set(report["model_position"])
    assert {"model", "k", "n", "share", "p_value", "p_holm"} <= set(report["model_position"]["per_model"][0])
    assert {"k", "n", "share", "p_value", "beta", "beta_se", "beta_p"} <= set(report["length"])
    assert {"chi2", "df", "p_value"} <= set(report["pairing"])
    assert {"n_eff", "design_effect", "empty_cells"} <= set(report["ipw"])
    # arena_demo plants a left preference, a length effect and non-uniform pairing (core.samples)
    assert report["position"]["share"] > 0.5 and report["position"]["p_value"] < 0.01
    assert report["length"]["share"] > 0.5 and report["length"]["p_value"] < 0.01
    assert report["pairing"]["p_value"] < 0.01


def test_bias_without_timestamps_marks_tests_unavailable(tmp_path, capsys):
    path = tmp_path / "votes.csv"
    path.write_text("model_a,model_b,winner\n" + "x,y,a\ny,x,b\nx,z,a\nz,y,tie\n" * 10)
    assert main(["bias", str(path)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["time_exposure"]["available"] is False and "timestamp" in report["time_exposure"]["reason"]
    assert report["length"]["available"] is False
    assert main(["bias", str(path), "--format", "markdown"]) == 0
    assert "not available" in capsys.readouterr().out
