"""The answer collector: every model's answer to every eval-set query, concurrently, within each
provider's limits, resumable, written to the store as answers arrive.

- :mod:`core.collect.config` — the models file (TOML) and the per-provider concurrency limits;
- :mod:`core.collect.queries` — the eval set to ask (CSV/JSONL, priority order);
- :mod:`core.collect.dispatch` — the queue and the dispatcher (one semaphore per provider);
- :mod:`core.collect.results` — cleaning, recording and progress as answers arrive;
- :mod:`core.collect.store` — the ``collect_*`` tables (resume without duplicates);
- :mod:`core.collect.stop` — a graceful stop (Ctrl-C, the page's Stop): answers in flight are stored;
- :mod:`core.collect.jobs` — one collecting process per run, recorded in the store; background jobs;
- :mod:`core.collect.summary`, :mod:`core.collect.export` — the end-of-run summary and the answers file
  a voting campaign reads;
- :mod:`core.commands.collect` — ``evalboard collect run|status|export``.
"""

from core.collect.config import (
           CollectConfig,
           ConfigError,
           ModelSpec,
           load_models,
           parse_models,
)
from core.collect.dispatch import RunSettings, SessionOutcome, collect
from core.collect.export import answers_table, campaign_answers, write_answers
from core.collect.queries import Query, load_queries
from core.collect.results import Progress
from core.collect.stop import StopSwitch
from core.collect.store import CollectStore, RunMismatch, RunNotFound
from core.collect.summary import RunSummary, summarize

__all__ = ["CollectConfig", "CollectStore", "ConfigError", "ModelSpec", "Progress", "Query", "RunMismatch",
           "RunNotFound", "RunSettings", "RunSummary", "SessionOutcome", "StopSwitch", "answers_table",
           "campaign_answers", "collect", "load_models", "load_queries", "parse_models", "summarize",
           "write_answers"]
