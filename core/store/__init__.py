"""The embedded SQLite store (through sqlite-utils): datasets, votes, EvalRuns, counts, matrices.

Votes are stored dictionary-encoded: label columns (models, annotators, queries …) hold integer codes
into the ``labels`` table and outcomes hold codes into ``outcomes``. That shrinks the file, makes a
million-vote ingest a few seconds, and loads straight into pandas categoricals. The view
``votes_labeled`` shows the same rows with their labels for anyone querying the file with SQL.

Every ingest is one transaction: a rejected or interrupted ingest leaves the store as it was.
Full loads keep a columnar snapshot beside the file (:mod:`core.store.snapshot`) so later loads of a
large dataset take a fraction of a second.
"""

from core.store import snapshot
from core.store.database import REPO_ROOT, Dataset, DatasetNotFound, IngestResult, Store, default_db_path

__all__ = ["REPO_ROOT", "Dataset", "DatasetNotFound", "IngestResult", "Store", "default_db_path", "snapshot"]
