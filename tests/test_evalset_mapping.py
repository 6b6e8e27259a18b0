"""Reading a query pool through a column mapping: core validation, the CLI's ``--map`` and the real
AlpacaEval instructions (whose text and category columns are ``instruction`` and ``dataset``)."""

from __future__ import annotations

import pandas as pd
import pytest

from core.cli import main
from core.evalset.pool import read_pool, suggest_columns
from core.io import InputError
from core.io.mapping import peek
from tests.conftest import shared_file

ALPACA = "alpaca_eval_annotations/instructions.csv"


@pytest.fixture
def odd_pool(tmp_path):
    path = tmp_path / "odd.csv"
    path.write_text("instruction_id,dataset,instruction,prompt\n"
                    "10,koala,How do I keep basil alive indoors?,ignored\n"
                    "11,oasst,Explain the offside rule in football.,ignored\n"
                    "12,koala,Write a haiku about rain on a tin roof.,ignored\n")
    return path


def test_a_mapped_column_wins_over_a_column_with_evalboards_name(odd_pool):
    frame = read_pool(odd_pool, columns={"prompt": "instruction", "category": "dataset", "query_id": "instruction_id"})
    assert frame["query"].tolist()[0] == "How do I keep basil alive indoors?"  # not the 'prompt' column
    assert frame["query_id"].tolist() == ["10", "11", "12"]
    assert frame["category"].tolist() == ["koala", "oasst", "koala"]
    # "query" and "text" are names of the prompt column too
    assert read_pool(odd_pool, columns={"query": "instruction"})["query"].iat[1].startswith("Explain")


def test_a_bad_mapping_names_every_problem_and_the_files_columns(odd_pool):
    with pytest.raises(InputError) as err:
        read_pool(odd_pool, columns={"prompt": "instr", "colour": "dataset"})
    text = str(err.value)
    assert "reads 'prompt' from 'instr', but the file has no such column" in text
    assert "instruction_id, dataset, instruction, prompt" in text
    assert "'colour', which is not a column of a query pool (one of: prompt, query_id, category)" in text
    with pytest.raises(InputError, match="reads 'prompt' from two columns"):
        read_pool(odd_pool, columns={"prompt": "instruction", "text": "dataset"})


def test_a_txt_pool_refuses_a_mapping(tmp_path):
    path = tmp_path / "p.txt"
    path.write_text("first query here\n")
    with pytest.raises(InputError, match="no columns to map"):
        read_pool(path, columns={"prompt": "x"})


def test_suggested_columns_for_unknown_names():
    frame = pd.DataFrame({"row": ["1", "2", "3"], "item_id": ["a", "b", "c"], "topic": ["x", "y", "x"],
                          "body": ["a long question about the sea?", "why is the sky blue at noon?", "how to knit"]})
    assert suggest_columns(frame) == {"prompt": "body", "query_id": "item_id", "category": "topic"}


def test_cli_map_comma_separated_and_repeated(odd_pool, tmp_path, db_path, capsys):
    out = tmp_path / "set.csv"
    assert main(["evalset", "build", str(odd_pool), "--size", "2", "--output", str(out),
                 "--map", "prompt=instruction,category=dataset", "--map", "query_id=instruction_id"]) == 0
    table = pd.read_csv(out, dtype=str)
    assert set(table["query_id"]) <= {"10", "11", "12"} and set(table["category"]) <= {"koala", "oasst"}
    assert "ignored" not in set(table["prompt"])


@pytest.mark.parametrize("option, message", [
    ("prompt", "--map must look like NAME=VALUE, not 'prompt'"),
    ("prompt=instruction,prompt=dataset", "--map names the same column twice"),
    ("prompt=nope", "reads 'prompt' from 'nope', but the file has no such column"),
])
def test_cli_bad_map_exits_2_and_writes_nothing(odd_pool, tmp_path, db_path, capsys, option, message):
    out = tmp_path / "set.csv"
    assert main(["evalset", "build", str(odd_pool), "--size", "2", "--output", str(out), "--map", option]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_alpaca_eval_instructions_through_map(tmp_path, db_path):
    path = shared_file(ALPACA)
    assert suggest_columns(peek(path)) == {"prompt": "instruction", "query_id": "instruction_id",
                                           "category": "dataset"}
    out = tmp_path / "alpaca.csv"
    assert main(["evalset", "build", str(path), "--size", "40", "--output", str(out),
                 "--map", "prompt=instruction,category=dataset,query_id=instruction_id"]) == 0
    table = pd.read_csv(out, dtype=str)
    source = pd.read_csv(path, dtype=str).set_index("instruction_id")
    assert set(table["category"]) == {"helpful_base", "koala", "oasst", "selfinstruct", "vicuna"}
    # every selected prompt is the instruction of its id, in the category AlpacaEval gives it
    assert (source.loc[table["query_id"], "instruction"].str.strip().to_numpy() == table["prompt"].to_numpy()).all()
    assert (source.loc[table["query_id"], "dataset"].to_numpy() == table["category"].to_numpy()).all()
