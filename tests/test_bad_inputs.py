"""The bad-inputs corpus: one small file per input rule (tests/bad_inputs/cases.json says what each breaks).

Every case goes through the three doors an input comes in by: ``evalboard ingest``, ``evalboard rank`` or
``leaderboard`` on the file, and the Data page's validation (``core.io.load`` on the uploaded bytes, then
``Store.ingest`` with the dataset name, as pages/data.py calls them). Each must answer with the expected
exit status and a message naming the file, the columns and the rows; a rejected file leaves the store
byte for byte as it was. The cases too big to keep as files (a 200 MB line, 10,000 columns, JSON nested
200,000 deep) are made here.
"""

from __future__ import annotations

import io
import json
import re
import time
from pathlib import Path

import pytest

from core.cli import main
from core.io import InputError, load
from core.store import Store
from tests.conftest import snapshot

CORPUS = Path(__file__).resolve().parent / "bad_inputs"
CASES = [c for c in json.loads((CORPUS / "cases.json").read_text()) if not c.get("helper")]
VALID_VOTES = b"model_a,model_b,winner\nalpha,beta,model_a\nbeta,gamma,tie\n"


def options(case: dict) -> list[str]:
    return [o.replace("{dir}", str(CORPUS)) for o in case["options"]]


def named_rows(message: str) -> set[int]:
    """Row numbers listed under the problems ("2 rows: 1 ('x'), 3 ('y')")."""
    found = set()
    for listing in re.findall(r"(?m)^\s+\d+ rows?(?:; first \d+ shown)?: (.*)$", message):
        found |= {int(n) for n in re.findall(r"(?:^|, )(\d+)(?= \(|,|$)", listing)}
    return found


def check_message(message: str, case: dict, source: str) -> None:
    assert source in message, message
    assert "rejected, nothing was stored" in message, message
    for column in case["columns"]:
        assert f"'{column}'" in message, (column, message)
    assert set(case["rows"]) <= named_rows(message), (case["rows"], message)
    for text in case["text"]:
        assert text in message, (text, message)
    assert "Traceback" not in message


@pytest.fixture
def filled_store(db_path) -> Path:
    """A store holding one dataset already: a rejected input must leave it exactly so."""
    with Store(db_path) as store:
        store.ingest(load(VALID_VOTES, name="kept.csv"))
    return db_path


def run(capsys, argv: list[str]) -> tuple[int, str]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.err


def test_the_corpus_covers_at_least_sixty_rules():
    assert len(CASES) >= 60
    assert len({c["file"] for c in CASES}) == len(CASES)
    for case in CASES:
        assert (CORPUS / case["file"]).is_file(), case["file"]
        assert case["rule"] and case["exit"] == 2
    assert sum((CORPUS / f).stat().st_size for f in {c["file"] for c in CASES}) < 64_000  # small in bytes


@pytest.mark.parametrize("case", CASES, ids=[c["file"] for c in CASES])
def test_ingest_refuses_with_file_columns_and_rows(case, filled_store, capsys):
    before = snapshot(filled_store)
    code, err = run(capsys, ["ingest", str(CORPUS / case["file"]), "--db", str(filled_store), *options(case)])
    assert code == case["exit"], err
    source = _source_named(case)
    check_message(err, case, source)
    assert snapshot(filled_store) == before


@pytest.mark.parametrize("case", [c for c in CASES if c["analyse"]], ids=[c["file"] for c in CASES if c["analyse"]])
def test_rank_or_leaderboard_of_the_file_refuses_it_too(case, filled_store, capsys):
    before = snapshot(filled_store)
    code, err = run(capsys, [case["analyse"], str(CORPUS / case["file"]), "--db", str(filled_store),
                             "--bootstrap", "20"])
    expected = case.get("analyse_exit", case["exit"])
    assert code == expected, err
    if expected == 2:
        check_message(err, case, str(CORPUS / case["file"]))
    assert snapshot(filled_store) == before


@pytest.mark.parametrize("case", CASES, ids=[c["file"] for c in CASES])
def test_the_data_page_validation_refuses_it(case, filled_store):
    """What pages/data.py does with an upload: load(bytes, name=file name), then ingest with the name field."""
    before = snapshot(filled_store)
    data = (CORPUS / case["file"]).read_bytes()
    opts = options(case)
    counts = None
    if "--counts" in opts:  # the page's second uploader: an object with the file's bytes and name
        path = Path(opts[opts.index("--counts") + 1])
        counts = io.BytesIO(path.read_bytes())
        counts.name = path.name
    name = opts[opts.index("--name") + 1] if "--name" in opts else None
    with pytest.raises(InputError) as error:
        loaded = load(data, name=case["file"], counts=counts)
        with Store(filled_store) as store:
            store.ingest(loaded, name=name)
    check_message(str(error.value), case, Path(_source_named(case)).name)
    assert snapshot(filled_store) == before


def _source_named(case: dict) -> str:
    """The file the message must name: the count matrix when that is the broken one."""
    opts = options(case)
    if "--counts" in opts and case["text"] and case["text"][0].endswith(".csv"):
        return opts[opts.index("--counts") + 1]
    return str(CORPUS / case["file"])


# -- made here: too big to keep as files ----------------------------------------------------------------
def test_a_200_mb_line_is_named_as_too_long(tmp_path, filled_store, capsys):
    path = tmp_path / "long_line.csv"
    with path.open("wb") as out:
        out.write(b"model_a,model_b,winner\nalpha,beta,a\n")
        out.write(b"x" * 200_000_000 + b",beta,a\n")
        out.write(b"beta,gamma,b\n")
    before = snapshot(filled_store)
    code, err = run(capsys, ["ingest", str(path), "--db", str(filled_store)])
    assert code == 2, err
    assert str(path) in err and "line 3 is too long" in err and "straddl" not in err
    assert snapshot(filled_store) == before


def test_rows_longer_than_arrows_block_are_still_read(tmp_path):
    """Arrow parses within 1 MiB blocks: a 3 MB answer text is a long row, not a broken file."""
    data = b"model_a,model_b,winner,answer_a\nalpha,beta,a,short\nbeta,gamma,b," + b"y" * 3_000_000 + b"\n"
    loaded = load(data, name="long_answers.csv")
    assert loaded.rows == 2 and loaded.frame["len_a"].tolist() == [5, 3_000_000]


def test_json_nested_200k_deep_is_an_input_error(tmp_path, filled_store, capsys):
    for name, body in (("deep.json", b"[" * 200_000 + b"]" * 200_000),
                       ("deep.jsonl", b'{"model_a": ' + b"[" * 200_000 + b"]" * 200_000 + b"}\n"),
                       ("deep_object.json", b'[{"model_a": "a", "model_b": "b", "winner": "a", "x": '
                                            + b'{"k": ' * 200_000 + b"1" + b"}" * 200_000 + b"}]")):
        path = tmp_path / name
        path.write_bytes(body)
        before = snapshot(filled_store)
        code, err = run(capsys, ["ingest", str(path), "--db", str(filled_store)])
        assert code == 2, err
        assert str(path) in err and "too deeply" in err
        assert snapshot(filled_store) == before


def test_json_nested_a_few_hundred_deep_inside_a_record_is_named_by_column():
    """Deep enough for pandas' flattening to run out of stack, shallow enough for json.loads."""
    depth = 900
    record = '{"model_a": "a", "model_b": "b", "winner": "a", "meta": ' + '{"k": ' * depth + "1" + "}" * depth + "}"
    try:
        loaded = load(f"[{record}]".encode(), name="nested.json")
    except InputError as exc:
        assert "nested.json" in str(exc)
    else:
        assert loaded.rows == 1


def wide_csv(columns: int, bad_column: int | None = None) -> bytes:
    header = "model," + ",".join(f"task{k}" for k in range(columns))
    rows = []
    for r in range(3):
        cells = ["0.5"] * columns
        if bad_column is not None and r == 1:
            cells[bad_column] = "1.5"
        rows.append(f"m{r}," + ",".join(cells))
    return ("\n".join([header, *rows]) + "\n").encode()


def test_10000_columns_with_one_bad_cell_name_that_column_and_row(tmp_path, filled_store, capsys):
    path = tmp_path / "wide.csv"
    path.write_bytes(wide_csv(10_000, bad_column=7_777))
    before = snapshot(filled_store)
    start = time.perf_counter()
    with pytest.raises(InputError) as error:
        load(path)
    assert time.perf_counter() - start < 10  # 2 s on a quiet machine (bench/bench_wide.py); this one is shared
    message = str(error.value)
    assert "'task7777'" in message and "above 1" in message and named_rows(message) == {2}
    code, err = run(capsys, ["ingest", str(path), "--db", str(filled_store)])
    assert code == 2 and "'task7777'" in err
    assert snapshot(filled_store) == before


def test_10000_columns_read_in_linear_time():
    """Doubling the columns about doubles the time (a quadratic check would quadruple it)."""
    def seconds(columns: int) -> float:
        data = wide_csv(columns)
        best = float("inf")
        for _ in range(2):
            start = time.perf_counter()
            loaded = load(data, name="wide.csv")
            best = min(best, time.perf_counter() - start)
        assert loaded.rows == 3 * columns
        return best

    small, large = seconds(2_500), seconds(10_000)
    assert large < 8 * small + 0.5, (small, large)  # 4x the columns: linear ~4x, quadratic ~16x


# -- the Data page itself, for the rules it adds (the dataset name field) and a sample of file rules ---------
from tests.test_app_data import at, click, texts, upload  # noqa: E402,F401  (the page fixture and helpers)

PAGE_SAMPLE = ["votes_u2028_in_name.csv", "votes_timestamp_epoch_ms.csv", "matrix_sum_above_one.csv",
               "counts_all_zero.csv", "lmeval_fewshot_true.json"]


@pytest.mark.parametrize("file", PAGE_SAMPLE)
def test_the_data_page_shows_the_problem_and_stores_nothing(file, at, db_path):
    case = next(c for c in CASES if c["file"] == file)
    before = snapshot(db_path)
    upload(at, file, (CORPUS / file).read_bytes())
    click(at, "upload_store")
    assert texts(at.error) == ["The file was not stored."]
    [code] = [c.value for c in at.code]
    check_message(code, case, file)
    assert snapshot(db_path) == before


@pytest.mark.parametrize("name", ["=HYPERLINK(\"x\")", "two\nlines", "a\u2028b", "@cat"])
def test_a_dataset_name_that_breaks_the_name_rules_is_shown_not_stored(name, at, db_path):
    before = snapshot(db_path)
    upload(at, "votes.csv", VALID_VOTES)
    at.text_input(key="upload_name").input(name)
    click(at, "upload_store")
    assert texts(at.error) == ["The file was not stored."]
    [code] = [c.value for c in at.code]
    assert code.startswith("votes.csv: rejected, nothing was stored: the dataset name") and "hint:" in code
    assert snapshot(db_path) == before
