"""Scheme ``style`` of ``evalboard rank`` (docs/methods.md §11): the CLI fits what core.ranking.style_fit fits,
on votes whose answer texts core.io counts, with ``--features``, zero-spread features, bad settings, the
JSON contract, markdown/CSV, ``--by``, and LLMFAO crowd votes."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from core.cli import main
from core.io.style_features import SIDE_COLUMNS, pair_features
from core.ranking.style_fit import fit_style
from tests.conftest import shared_file

MODELS = ["m1", "m2", "m3", "m4"]
SCORE = {"model_a": 1.0, "model_b": 0.0, "tie": 0.5}


def answer(rng: np.random.Generator, header: bool = True) -> str:
    text = "# Title\n" if header and rng.random() < 0.3 else ""
    text += "word " * int(rng.integers(5, 80)) + "\n"
    text += "".join(f"- item {i}\n" for i in range(int(rng.integers(0, 4))))
    text += "".join(f"some **bold {i}** here\n" for i in range(int(rng.integers(0, 3))))
    return text


def votes_with_texts(n: int = 300, seed: int = 1, header: bool = True) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        a, b = rng.choice(len(MODELS), 2, replace=False)
        rows.append({"model_a": MODELS[a], "model_b": MODELS[b],
                     "winner": str(rng.choice(["model_a", "model_b", "tie"], p=[0.45, 0.4, 0.15])),
                     "game_id": "g1" if i % 2 else "g2",
                     "answer_a": answer(rng, header), "answer_b": answer(rng, header)})
    return pd.DataFrame(rows)


def write(frame: pd.DataFrame, tmp_path, name: str = "votes.csv"):
    path = tmp_path / name
    frame.to_csv(path, index=False)
    return path


def rank(capsys, *args) -> tuple[int, str, str]:
    code = main(["rank", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def rank_json(capsys, *args) -> dict:
    code, out, err = rank(capsys, *args, "--format", "json")
    assert code == 0, err
    return json.loads(out)


def direct_fit(frame: pd.DataFrame, features, **kw):
    models = sorted(set(frame["model_a"]) | set(frame["model_b"]))
    counts = pair_features(frame["answer_a"], frame["answer_b"])
    sides = {f: (counts[a].to_numpy(float), counts[b].to_numpy(float)) for f, (a, b) in SIDE_COLUMNS.items()}
    return fit_style(frame["model_a"].map(models.index).to_numpy(), frame["model_b"].map(models.index).to_numpy(),
                     frame["winner"].map(SCORE).to_numpy(), sides, models, features=features, **kw)


def test_the_cli_fits_what_fit_style_fits(tmp_path, capsys):
    frame = votes_with_texts()
    out = rank_json(capsys, write(frame, tmp_path), "--scheme", "style")
    fit = direct_fit(frame, ("length", "headers", "lists", "bold"))
    elo = {m["model"]: m["rating"] for m in out["models"]}
    np.testing.assert_allclose([elo[m] for m in fit.models], fit.elo, atol=1e-9)
    assert [c["name"] for c in out["covariates"]] == list(fit.features) == ["length", "headers", "lists", "bold"]
    np.testing.assert_allclose([c["estimate"] for c in out["covariates"]], fit.beta, atol=1e-12)
    np.testing.assert_allclose([c["se"] for c in out["covariates"]], fit.beta_se, atol=1e-12)
    np.testing.assert_allclose([c["mean"] for c in out["covariates"]], fit.feature_mean, atol=1e-12)
    np.testing.assert_allclose([c["sd"] for c in out["covariates"]], fit.feature_sd, atol=1e-12)
    low = {m["model"]: m["ci_low"] for m in out["models"]}
    np.testing.assert_allclose([low[m] for m in fit.models], fit.elo_low, atol=1e-9)
    assert out["params"]["ci"] == "sandwich"  # the scheme's default interval


def test_json_contract(tmp_path, capsys):
    out = rank_json(capsys, write(votes_with_texts(), tmp_path), "--scheme", "style")
    assert out["scheme"] == "style" and out["params"]["rating_scale"] == "elo"
    assert {"scheme", "n_votes", "n_models", "identifiable", "params", "models", "covariates", "plain"} <= set(out)
    assert set(out["covariates"][0]) == {"name", "estimate", "se", "mean", "sd"}
    assert out["plain"]["scheme"] == "bt" and "covariates" not in out["plain"]
    plain = {m["model"]: m["rank"] for m in out["plain"]["models"]}
    for m in out["models"]:
        assert m["plain_rank"] == plain[m["model"]]
        assert m["rank_change"] == m["plain_rank"] - m["rank"]
    assert out["params"]["features"] == ["length", "headers", "lists", "bold"]
    assert out["params"]["features_dropped"] == [] and out["params"]["penalty"] == 1.0


def test_features_subset_and_position(tmp_path, capsys):
    frame = votes_with_texts()
    path = write(frame, tmp_path)
    out = rank_json(capsys, path, "--scheme", "style", "--features", "length,lists,position")
    fit = direct_fit(frame, ("length", "lists", "position"))
    assert [c["name"] for c in out["covariates"]] == ["length", "lists", "position"]
    np.testing.assert_allclose([c["estimate"] for c in out["covariates"]], fit.beta, atol=1e-12)


def test_bootstrap_intervals(tmp_path, capsys):
    frame = votes_with_texts(n=200)
    out = rank_json(capsys, write(frame, tmp_path), "--scheme", "style", "--ci", "bootstrap", "--bootstrap", "50",
                    "--seed", "3")
    fit = direct_fit(frame, ("length", "headers", "lists", "bold"), interval="bootstrap", replicates=50, seed=3)
    low = {m["model"]: m["ci_low"] for m in out["models"]}
    np.testing.assert_allclose([low[m] for m in fit.models], fit.elo_low, atol=1e-9)
    assert out["params"]["replicates"] == 50


def test_a_zero_spread_feature_is_dropped_and_noted(tmp_path, capsys):
    out = rank_json(capsys, write(votes_with_texts(header=False), tmp_path), "--scheme", "style")
    assert [c["name"] for c in out["covariates"]] == ["length", "lists", "bold"]
    assert out["params"]["features_dropped"] == ["headers"]
    assert any("headers" in note and "dropped" in note for note in out["params"]["notes"])


@pytest.mark.parametrize("value, words", [("length,bogus", "'bogus' unknown"), ("length,length", "distinct"),
                                          ("", "distinct")])
def test_bad_features_exit_2_with_a_message(tmp_path, capsys, value, words):
    code, out, err = rank(capsys, write(votes_with_texts(n=60), tmp_path), "--scheme", "style", "--features", value)
    assert code == 2 and out == ""
    assert words in err and "length, headers, lists, bold, position" in err


def test_features_need_scheme_style(tmp_path, capsys):
    code, _, err = rank(capsys, write(votes_with_texts(n=60), tmp_path), "--scheme", "bt", "--features", "length")
    assert code == 2 and "scheme style" in err


def test_votes_without_texts_or_counts_are_refused(tmp_path, capsys):
    frame = votes_with_texts(n=60).drop(columns=["answer_a", "answer_b"])
    code, _, err = rank(capsys, write(frame, tmp_path), "--scheme", "style")
    assert code == 2 and "answer_a/answer_b" in err


def test_per_side_count_columns_without_texts(tmp_path, capsys):
    frame = votes_with_texts()
    counts = pair_features(frame["answer_a"], frame["answer_b"])
    with_counts = pd.concat([frame.drop(columns=["answer_a", "answer_b"]), counts], axis=1)
    from_counts = rank_json(capsys, write(with_counts, tmp_path, "counts.csv"), "--scheme", "style")
    from_texts = rank_json(capsys, write(frame, tmp_path), "--scheme", "style")
    assert from_counts["covariates"] == from_texts["covariates"]
    assert from_counts["models"] == from_texts["models"]
    only_lengths = with_counts.drop(columns=["headers_a", "headers_b", "lists_a", "lists_b", "bold_a", "bold_b"])
    out = rank_json(capsys, write(only_lengths, tmp_path, "lengths.csv"), "--scheme", "style")
    assert [c["name"] for c in out["covariates"]] == ["length"]
    assert any("not controlled for headers, lists, bold" in n for n in out["params"]["notes"])
    code, _, err = rank(capsys, write(only_lengths, tmp_path, "lengths.csv"), "--scheme", "style", "--features",
                        "length,bold")
    assert code == 2 and "bold" in err


def test_markdown_csv_and_by(tmp_path, capsys):
    path = write(votes_with_texts(), tmp_path)
    code, md, err = rank(capsys, path, "--scheme", "style", "--format", "markdown")
    assert code == 0, err
    assert "| Feature | Estimate | SE | Mean (raw d) | SD (raw d) |" in md
    assert "| Model | Plain rank | Controlled rank | Change |" in md and "Without style control" in md
    code, csv, err = rank(capsys, path, "--scheme", "style", "--format", "csv")
    assert code == 0, err
    header = csv.splitlines()[0].split(",")
    assert header[header.index("interval_note") + 1:header.index("interval_note") + 3] == ["plain_rank", "rank_change"]
    out = rank_json(capsys, path, "--scheme", "style", "--by", "game_id")
    assert [g["group"]["game_id"] for g in out["groups"]] == ["g1", "g2"]
    assert all([c["name"] for c in g["covariates"]] == ["length", "headers", "lists", "bold"] for g in out["groups"])


def test_llmfao_crowd_ranks_and_reports_the_coefficients(tmp_path, capsys):
    votes = pd.read_csv(shared_file("llmfao/crowd-comparisons.csv"))
    answers = pd.read_json(shared_file("llmfao/results.jsonl"), lines=True)[["prompt", "model", "result"]]
    for side, column in (("x", "answer_a"), ("y", "answer_b")):
        votes = votes.merge(answers.rename(columns={"model": f"model_{side}", "result": column}),
                            on=["prompt", f"model_{side}"], how="left")
    frame = pd.DataFrame({"model_a": votes["left"], "model_b": votes["right"],
                          "winner": votes["winner"].map({"left": "model_a", "right": "model_b", "tie": "tie"}),
                          "answer_a": votes["answer_a"], "answer_b": votes["answer_b"]})
    path = tmp_path / "llmfao.jsonl"
    frame.to_json(path, orient="records", lines=True)
    out = rank_json(capsys, path, "--scheme", "style")
    assert out["n_votes"] == len(frame)
    assert out["n_models"] == len(set(frame["model_a"]) | set(frame["model_b"]))
    assert [c["name"] for c in out["covariates"]] == ["length", "headers", "lists", "bold"]
    assert all(np.isfinite(c["estimate"]) and c["se"] > 0 for c in out["covariates"])
    fit = direct_fit(frame, ("length", "headers", "lists", "bold"))
    np.testing.assert_allclose([c["estimate"] for c in out["covariates"]], fit.beta, atol=1e-9)
    elo = {m["model"]: m["rating"] for m in out["models"]}
    np.testing.assert_allclose([elo[m] for m in fit.models], fit.elo, atol=1e-6)
    plain = {m["model"]: m["rank"] for m in out["plain"]["models"]}
    assert all(m["rank_change"] == plain[m["model"]] - m["rank"] for m in out["models"])


def test_golden_votes_stay_out_and_weights_count(tmp_path, capsys):
    frame = votes_with_texts(n=320, seed=5)
    rng = np.random.default_rng(2)
    frame["weight"] = rng.uniform(0.2, 2.0, len(frame))
    golden = np.zeros(len(frame), dtype=bool)
    golden[:20] = True
    frame["is_golden"] = golden
    frame["golden_answer"] = np.where(golden, "model_a", None)
    out = rank_json(capsys, write(frame, tmp_path), "--scheme", "style", "--policy", "keep")
    used = frame[~golden].reset_index(drop=True)
    fit = direct_fit(used, ("length", "headers", "lists", "bold"), weight=used["weight"].to_numpy())
    assert out["params"]["golden_votes_excluded"] == 20
    np.testing.assert_allclose([c["estimate"] for c in out["covariates"]], fit.beta, atol=1e-12)
    elo = {m["model"]: m["rating"] for m in out["models"]}
    np.testing.assert_allclose([elo[m] for m in fit.models], fit.elo, atol=1e-9)


def test_anchor(tmp_path, capsys):
    frame = votes_with_texts()
    out = rank_json(capsys, write(frame, tmp_path), "--scheme", "style", "--anchor", "m2=1000")
    fit = direct_fit(frame, ("length", "headers", "lists", "bold"), anchor=("m2", 1000.0))
    elo = {m["model"]: m["rating"] for m in out["models"]}
    np.testing.assert_allclose([elo[m] for m in fit.models], fit.elo, atol=1e-9)
    assert elo["m2"] == 1000.0
    code, _, err = rank(capsys, write(frame, tmp_path), "--scheme", "style", "--anchor", "zz=1000")
    assert code == 2 and "'zz'" in err


def test_a_stored_dataset_keeps_every_count(tmp_path, capsys):
    db = tmp_path / "store.db"
    assert main(["ingest", str(write(votes_with_texts(), tmp_path)), "--name", "texts", "--db", str(db)]) == 0
    capsys.readouterr()
    out = rank_json(capsys, "texts", "--db", db, "--scheme", "style")
    assert [c["name"] for c in out["covariates"]] == ["length", "headers", "lists", "bold"]
    assert not any("not controlled for" in n for n in out["params"]["notes"])


def test_an_empty_answer_counts_zero(tmp_path, capsys):
    frame = votes_with_texts()
    frame.loc[3, "answer_b"] = ""
    out = rank_json(capsys, write(frame, tmp_path), "--scheme", "style")
    frame.loc[3, "answer_b"] = ""  # what an empty cell means: an empty answer
    fit = direct_fit(frame, ("length", "headers", "lists", "bold"))
    np.testing.assert_allclose([c["estimate"] for c in out["covariates"]], fit.beta, atol=1e-12)
