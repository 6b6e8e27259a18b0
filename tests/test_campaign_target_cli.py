"""``evalboard campaign create --rank-target`` and what ``campaign status`` says of the target."""

from __future__ import annotations

import json
import random
import re
from contextlib import closing

import pytest

from core.campaign import get_campaign, record_vote, serve_next
from core.cli import main
from core.store.connection import connect
from tests.test_campaign_target import TRUE_THETA, answers_table, bt_vote


@pytest.fixture
def answers_file(tmp_path):
    path = tmp_path / "answers.csv"
    answers_table(list(TRUE_THETA), 200).drop(columns=["category"]).to_csv(path, index=False)
    return path


def create(answers_file, capsys, *extra: str) -> dict[str, str]:
    assert main(["campaign", "create", "goal", "--answers", str(answers_file), "--tokens", "8", "--seed", "4",
                 "--target", "5000", *extra]) == 0
    out = capsys.readouterr().out
    return dict(line.split("\t") for line in out.splitlines() if "\t" in line) | {"_out": out}


def vote(db_path, tokens: list[str], n: int, seed: int = 0) -> None:
    rng = random.Random(seed)
    with closing(connect(db_path)) as conn:
        for _ in range(n):
            token = rng.choice(tokens)
            item = serve_next(conn, token)
            record_vote(conn, token, item.assignment_id, bt_vote(conn, item, rng))


def status(capsys) -> tuple[dict, str]:
    assert main(["campaign", "status", "goal", "--format", "json"]) == 0
    as_json = json.loads(capsys.readouterr().out)
    assert main(["campaign", "status", "goal"]) == 0
    return as_json, capsys.readouterr().out


def test_create_with_a_rank_target_and_follow_it_to_the_end(answers_file, db_path, capsys):
    tokens = create(answers_file, capsys, "--rank-target", "top3")
    assert "rank target top:3: ranks 1–3 separated from each other and from rank 4" in tokens.pop("_out")
    with closing(connect(db_path)) as conn:
        assert get_campaign(conn, "goal").rank_target == "top:3"
    as_json, text = status(capsys)
    assert as_json["rank_target"]["warming_up"] is True and as_json["rank_target"]["reached"] is False
    assert "not reached; warming up" in text

    vote(db_path, list(tokens.values()), 200)
    as_json, text = status(capsys)
    target = as_json["rank_target"]
    assert (target["target"], target["votes"], target["warming_up"], target["reached"]) == ("top:3", 200, False,
                                                                                          False)
    assert [p["rank"] for p in target["pairs"]] == [1, 2, 3]
    for pair in target["pairs"]:  # each target pair: its gap, its interval, its direct votes
        assert pair["ci_low"] < pair["gap_elo"] < pair["ci_high"] and pair["votes"] > 0
        # The text rounds the gap once (0.1 Elo), the JSON to 0.01: compare within the text's rounding.
        [shown] = re.findall(rf"rank {pair['rank']} {pair['higher']} vs {pair['lower']}: gap ([+-][0-9.]+) Elo", text)
        assert abs(float(shown) - pair["gap_elo"]) <= 0.05 + 0.005
    assert "not reached (serving the pairs that help it most)" in text

    vote(db_path, list(tokens.values()), 1000, seed=1)
    as_json, text = status(capsys)
    target = as_json["rank_target"]
    assert target["reached"] is True
    # The scheduler records the vote count at its own refits (every 5 % of new votes); status fits every vote,
    # so it can see the target reached a few votes before the scheduler does (the tokens, and so the votes,
    # differ from run to run).
    if target["reached_at"] is not None:
        assert f"REACHED at {target['reached_at']:,} votes (served balanced since)" in text
    else:
        assert target["separated_now"] and "REACHED (served balanced from the scheduler's next refit" in text
    assert [(p["higher"], p["lower"]) for p in target["pairs"]] == [("m0", "m1"), ("m1", "m2"), ("m2", "m3")]


def test_without_a_rank_target_status_has_none(answers_file, db_path, capsys):
    create(answers_file, capsys)
    as_json, text = status(capsys)
    assert as_json["rank_target"] is None and "rank target" not in text


@pytest.mark.parametrize("args, message", [
    (["--rank-target", "best3"], "rank target must be top:N"),
    (["--rank-target", "top:0"], "rank target must be top:N"),
    (["--rank-target", "adjacent", "--active-sampling"], "choose active sampling or a rank target"),
])
def test_a_bad_rank_target_exits_2_and_stores_nothing(answers_file, db_path, capsys, args, message):
    assert main(["campaign", "create", "bad", "--answers", str(answers_file), *args]) == 2
    assert message in capsys.readouterr().err
    assert main(["campaign", "status"]) == 0 and capsys.readouterr().out == ""


def test_the_help_explains_the_rank_target(capsys):
    with pytest.raises(SystemExit):
        main(["campaign", "create", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--rank-target top3|top:N|adjacent" in text and "separates ranks 1 to N" in text
