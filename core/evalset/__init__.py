"""The eval-set builder: from a raw query pool to a representative, deduplicated, category-balanced
eval set (exact and semantic dedup, pre-filter, model or offline categories and scores, Hamilton
allocation with slice quotas, post-selection similarity check, manual review, audit of every stage)."""

from core.evalset.allocation import hamilton
from core.evalset.pipeline import build, finish, prepare
from core.evalset.pool import read_pool
from core.evalset.results import checks, eval_set, reject, write_outputs
from core.evalset.settings import BuildSettings, ModelConfig
from core.evalset.state import Build

__all__ = ["Build", "BuildSettings", "ModelConfig", "build", "checks", "eval_set", "finish", "hamilton",
           "prepare", "read_pool", "reject", "write_outputs"]
