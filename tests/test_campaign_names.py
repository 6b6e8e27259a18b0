"""A campaign's votes under one stable name and id, old names that keep working, unknown names that say
what exists, and the owner's annotator names in every analysis of the store."""

from __future__ import annotations

import json
import time

import pytest

from core.campaign import issue_tokens, publish, record_vote, serve_next
from core.cli import main
from core.formats import jsonl_text
from core.io import load
from core.store import DatasetNotFound, Store
from core.store.database import annotator_display_names
from core.store.names import MAX_LISTED
from tests.test_campaign import ANSWERS_CSV, GOLDEN_CSV, campaign, conn, fixed_tokens  # noqa: F401 - fixtures

LABELS = ("Zelda Quill", "Yorick Moss")  # names no other text of a page or report could contain


@pytest.fixture
def tokens(conn, campaign) -> list:
    return issue_tokens(conn, campaign, labels=LABELS)


def vote(conn, token: str, n: int | None = None, outcome: str = "model_a", seconds: float = 10.0) -> int:
    """Answer up to ``n`` items (all), each ``seconds`` after it was served."""
    done = 0
    while (n is None or done < n) and (item := serve_next(conn, token)) is not None:
        record_vote(conn, token, item.assignment_id, dict.fromkeys(item.dimensions, outcome),
                    now=time.time() + seconds)
        done += 1
    return done


def old_snapshot(store: Store, campaign: str, frame_jsonl: bytes, n: int):
    """A snapshot as earlier versions published it: its own id, named by its size."""
    loaded = load(frame_jsonl, kind="votes", name=f"campaign:{campaign}", format="jsonl")
    return store.ingest(loaded, name=f"campaign {campaign} ({n} votes)").dataset


# -- one stable name and id ------------------------------------------------------------------------
def test_every_publish_replaces_the_votes_of_one_dataset(db_path, conn, tokens):
    vote(conn, tokens[0].token, 1)
    first = publish(db_path, "demo")
    assert first.name == "campaign demo"
    vote(conn, tokens[0].token)
    second = publish(db_path, "demo")
    assert (second.id, second.name) == (first.id, "campaign demo") and second.rows > first.rows
    assert second.sha256 != first.sha256
    with Store(db_path) as store:
        assert [d.id for d in store.datasets()] == [first.id]
        assert len(store.load(first.id)) == second.rows


def test_the_campaign_is_found_by_every_name_it_has_had(db_path, conn, tokens):
    vote(conn, tokens[0].token, 2)
    dataset = publish(db_path, "demo")
    with Store(db_path) as store:
        for name in ("demo", "campaign demo", f"campaign demo ({dataset.rows} votes)", "campaign demo (1 vote)",
                     "campaign demo (1,234 votes)", str(dataset.id), dataset.id):
            assert store.dataset(name).id == dataset.id, name
        with pytest.raises(DatasetNotFound):
            store.dataset("campaign other")


def test_an_exact_dataset_name_wins_over_a_campaign(db_path, conn, tokens):
    vote(conn, tokens[0].token, 1)
    published = publish(db_path, "demo")
    with Store(db_path) as store:
        upload = store.ingest(load(b"model_a,model_b,winner\na,b,a\n", name="demo.csv")).dataset
        assert upload.name == "demo"
        assert store.dataset("demo").id == upload.id
        assert store.dataset("campaign demo").id == published.id


def test_a_snapshot_of_an_earlier_version_becomes_the_campaign_dataset(db_path, conn, campaign, tokens):
    from core.campaign import vote_records

    vote(conn, tokens[0].token, 2)
    frame = vote_records(conn, campaign).drop(columns="category")
    with Store(db_path) as store:
        old = old_snapshot(store, "demo", jsonl_text(frame).encode(), len(frame))
        older = old_snapshot(store, "demo", jsonl_text(frame.iloc[:1]).encode(), 1)  # a leftover twin
        assert store.dataset("demo").id == old.id  # before any new publish, the campaign's name works
    vote(conn, tokens[0].token)
    fresh = publish(db_path, "demo")
    assert (fresh.id, fresh.name) == (old.id, "campaign demo")
    with Store(db_path) as store:
        assert [d.id for d in store.datasets()] == [old.id]  # the twin is gone
        assert store.dataset(f"campaign demo ({len(frame)} votes)").id == old.id  # a script's old name
        with pytest.raises(DatasetNotFound):
            store.dataset(older.id)


def test_publishing_the_same_votes_again_renames_an_old_snapshot_only(db_path, conn, campaign, tokens):
    vote(conn, tokens[0].token, 2)
    first = publish(db_path, "demo")
    with Store(db_path) as store:
        store.db.conn.execute("UPDATE datasets SET name = 'campaign demo (4 votes)' WHERE id = ?", [first.id])
    again = publish(db_path, "demo")
    assert (again.id, again.name, again.sha256) == (first.id, "campaign demo", first.sha256)


def test_a_campaign_dataset_exists_even_when_an_upload_holds_the_same_votes(db_path, conn, campaign, tokens):
    from core.campaign import vote_records

    vote(conn, tokens[0].token, 2)
    frame = vote_records(conn, campaign).drop(columns="category")
    with Store(db_path) as store:
        upload = store.ingest(load(jsonl_text(frame).encode(), kind="votes", name="copy.jsonl",
                                   format="jsonl"), name="my copy").dataset
    published = publish(db_path, "demo")
    assert published.id != upload.id and published.name == "campaign demo"


@pytest.mark.parametrize("columns", [None, ["model_a", "model_b", "winner"]])
def test_a_load_during_a_replacement_reads_the_old_content_or_the_new_never_a_mix(db_path, monkeypatch, columns):
    """A load reads the dataset's row, its labels and its rows in turn; a replacement that commits in
    between must not give it the new rows under the old row count and labels (or no rows at all)."""
    old_votes = b"model_a,model_b,winner\nx,y,model_a\ny,x,tie\nx,y,model_b\n"
    new_votes = b"model_a,model_b,winner\np,q,model_b\n"
    with Store(db_path) as store:
        dataset = store.ingest(load(old_votes, name="v.csv")).dataset
    original = Store._labels
    replaced = []

    def replace_in_between(self, dataset_id):
        if not replaced:
            with Store(db_path) as writer:  # another connection commits here
                replaced.append(writer.ingest(load(new_votes, name="v.csv"), name="v", replace=dataset.id))
        return original(self, dataset_id)

    monkeypatch.setattr(Store, "_labels", replace_in_between)
    with Store(db_path) as reader:
        during = reader.load(dataset.id, columns)
        after = reader.load(dataset.id, columns)
    assert replaced and replaced[0].created and replaced[0].dataset.id == dataset.id
    assert during[["model_a", "model_b", "winner"]].astype(str).values.tolist() == [
        ["x", "y", "model_a"], ["y", "x", "tie"], ["x", "y", "model_b"]]
    assert after[["model_a", "model_b", "winner"]].astype(str).values.tolist() == [["p", "q", "model_b"]]


# -- unknown names ---------------------------------------------------------------------------------
def test_an_unknown_name_lists_what_exists_close_matches_first(db_path, conn, tokens, capsys):
    vote(conn, tokens[0].token, 1)
    publish(db_path, "demo")
    with Store(db_path) as store:
        store.ingest(load(b"model_a,model_b,winner\na,b,a\n", name="arena.csv"))
    code = main(["rank", "dmeo", "--db", str(db_path)])
    err = capsys.readouterr().err
    assert code == 2 and "no such file, and no stored dataset of that name" in err
    assert "did you mean 'campaign demo'?" in err
    assert err.index("'campaign demo'") < err.index("'arena'")
    assert "campaigns: 'demo'" in err


def test_an_unknown_name_lists_at_most_a_few_names(db_path, capsys):
    with Store(db_path) as store:
        for i in range(MAX_LISTED + 15):
            store.ingest(load(f"model_a,model_b,winner\na,b,a\nb,a,{i % 2 and 'a' or 'b'}\n".encode()
                              + b"a,b,tie\n" * i, name=f"set-{i:02d}.csv"))
        with pytest.raises(DatasetNotFound) as caught:
            store.dataset("set-2x")
    hint = caught.value.hint
    assert hint.startswith("did you mean 'set-2")
    assert hint.count("'set-") == MAX_LISTED + 1  # the suggestion and MAX_LISTED listed names
    assert "… and 15 more (`evalboard datasets` lists them all)" in hint


def test_an_unpublished_campaign_says_how_to_publish(db_path, campaign, capsys):
    code = main(["annotators", "demo", "--db", str(db_path)])
    err = capsys.readouterr().err
    assert code == 2 and "campaign 'demo' has no published votes yet" in err
    assert "evalboard campaign publish demo" in err
    with Store(db_path) as store:
        store.ingest(load(b"model_a,model_b,winner\na,b,a\n", name="arena.csv"))
        with pytest.raises(DatasetNotFound) as caught:
            store.dataset("arnea")
    assert caught.value.hint == ("did you mean 'arena'? stored datasets: 'arena'; "
                                 "campaigns: 'demo' (not published yet)")


def test_an_empty_store_says_so(db_path):
    with Store(db_path) as store, pytest.raises(DatasetNotFound, match="no dataset is stored yet"):
        store.dataset("anything")


# -- annotator names -------------------------------------------------------------------------------
def test_display_names_are_the_labels_unless_two_would_look_alike():
    ids = ["annotator-1a", "annotator-2b", "annotator-3c", "annotator-4d"]
    assert annotator_display_names({"annotator-1a": "Ann", "annotator-2b": "Bob"}, ids) == \
        ["Ann", "Bob", "annotator-3c", "annotator-4d"]
    assert annotator_display_names({"annotator-1a": "Ann", "annotator-2b": "Ann"}, ids[:2]) == \
        ["Ann (annotator-1a)", "Ann (annotator-2b)"]
    # a name that is another annotator's id would make two annotators one
    assert annotator_display_names({"annotator-1a": "annotator-2b"}, ids[:2]) == \
        ["annotator-2b (annotator-1a)", "annotator-2b"]


def test_published_votes_keep_ids_and_every_load_shows_the_owners_names(db_path, conn, tokens):
    vote(conn, tokens[0].token)
    vote(conn, tokens[1].token, 2, outcome="model_b")
    dataset = publish(db_path, "demo")
    ids = {t.annotator_id: t.label for t in tokens}
    with Store(db_path) as store:
        stored = {r[0] for r in store.db.execute("SELECT DISTINCT annotator_id FROM votes_labeled")}
        assert stored == set(ids)  # the votes keep the hashed ids
        assert store.annotator_labels(dataset.id) == ids
        raw = store.load(dataset.id, annotator_labels=False)
        shown = store.load(dataset.id)
        again = store.load(dataset.id)  # from the columnar snapshot this time
        preview = store.load(dataset.id, limit=3)
        some = store.load(dataset.id, columns=["model_a", "annotator_id"])
    assert set(raw["annotator_id"]) == set(ids)
    for frame in (shown, again, some):
        assert list(frame["annotator_id"].astype(str)) == [ids[a] for a in raw["annotator_id"]]
        assert list(frame["annotator_id"].cat.categories) == sorted(LABELS)
    assert set(preview["annotator_id"]) <= set(LABELS)


def test_uploaded_votes_without_labels_load_as_they_were(store):
    dataset = store.ingest(load(b"model_a,model_b,winner,annotator_id\na,b,a,judge-2\nb,a,b,judge-1\n",
                                name="v.csv")).dataset
    frame = store.load(dataset.id)
    assert list(frame["annotator_id"]) == ["judge-2", "judge-1"]
    assert store.annotator_labels(dataset.id) == {}


def labelled_votes(db_path, conn, tokens):
    """Zelda takes her time; Yorick clicks within a second (unqualified)."""
    vote(conn, tokens[0].token)
    vote(conn, tokens[1].token, outcome="model_b", seconds=0.5)
    return publish(db_path, "demo")


def test_the_cli_analyses_show_the_owners_names(db_path, conn, tokens, capsys, tmp_path):
    labelled_votes(db_path, conn, tokens)
    ids = [t.annotator_id for t in tokens]
    outputs = {}
    for command, fmt in (("annotators", "json"), ("annotators", "markdown"), ("rank", "json"), ("rank", "markdown"),
                         ("rank", "csv"), ("bias", "json"), ("bias", "markdown")):
        assert main([command, "demo", "--db", str(db_path), "--format", fmt]) == 0
        outputs[command, fmt] = capsys.readouterr().out
    annotators = json.loads(outputs["annotators", "json"])
    assert sorted(a["annotator_id"] for a in annotators["annotators"]) == sorted(LABELS)
    assert annotators["exclusion_effect"]["unqualified_annotators"] == ["Yorick Moss"]
    assert all(label in outputs["annotators", "markdown"] for label in LABELS)
    assert json.loads(outputs["rank", "json"])["params"]["unqualified_annotators"] == ["Yorick Moss"]
    for text in outputs.values():
        assert not any(i in text for i in ids)  # never the hashed id where a name is known
    assert main(["report", "campaign demo", "--db", str(db_path), "--out", str(tmp_path / "bundle"), "--no-png",
                 "--bootstrap", "20"]) == 0
    bundle = {p.name: p.read_text() for p in (tmp_path / "bundle").iterdir() if p.suffix in (".md", ".json")}
    assert any(LABELS[0] in text for text in bundle.values())
    assert not any(i in text for text in bundle.values() for i in ids)


def test_a_replacement_keeps_one_columnar_copy_and_refuses_another_kind(store):
    from core.store import snapshot

    dataset = store.ingest(load(b"model_a,model_b,winner\nx,y,model_a\n", name="v.csv")).dataset
    store.load(dataset.id)  # writes the columnar copy of the first content
    result = store.ingest(load(b"model_a,model_b,winner\np,q,tie\n", name="v.csv"), name="v", replace=dataset.id)
    store.load(dataset.id)
    copies = sorted(p.name for p in snapshot.folder(store.path).glob("*.arrow"))
    assert copies == [snapshot.path_for(store.path, dataset.id, result.dataset.sha256).name]
    runs = load(b"model_id,task_id,metric_name,score,category\nm,t,acc,0.5,c\n", name="runs.csv")
    with pytest.raises(ValueError, match="holds votes, not eval runs"):
        store.ingest(runs, name="v", replace=dataset.id)
    assert store.load(dataset.id)["model_a"].tolist() == ["p"]
