"""Settings of a build: the eval-set size and quotas, and how to reach a model (or none: offline)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from core.errors import SettingError
from core.evalset.dedup import DUPLICATE_ABOVE, REVIEW_FROM
from core.evalset.selection import (
    BUFFER,
    DEFAULT_SLICES,
    SIMILARITY_LIMIT,
    SelectionSettings,
    SliceQuota,
)
from core.llm.client import Endpoint, LLMClient


@dataclass(frozen=True)
class ModelConfig:
    """An OpenAI-compatible endpoint for the model stages (and optionally its embeddings model)."""

    base_url: str
    model: str
    api_key_env: str | None = None
    concurrency: int = 4
    embed_model: str | None = None
    timeout_s: float = 60.0
    max_retries: int = 3

    def __post_init__(self):
        if not self.base_url or not self.model:
            raise SettingError("a model endpoint needs both a base URL and a model name")
        if not isinstance(self.concurrency, int) or self.concurrency < 1:
            raise SettingError("concurrency must be a positive integer")

    def endpoint(self, model: str | None = None) -> Endpoint:
        return Endpoint(self.base_url, model or self.model, self.api_key_env, self.timeout_s, self.concurrency,
                        self.max_retries)

    def describe(self) -> dict:
        d = asdict(self)
        d.pop("timeout_s")
        return d  # holds the *name* of the key variable only, never a key


@dataclass(frozen=True)
class BuildSettings:
    size: int
    categories: tuple[str, ...] = ()  # given by the user; empty: the pool's column, the model, or clusters
    exclude: tuple[str, ...] = ()
    seed: int = 0
    domain: str = ""  # what the eval set is about, for the relevance judgment
    model: ModelConfig | None = None
    slices: tuple[SliceQuota, ...] = DEFAULT_SLICES
    buffer: int = BUFFER
    similarity_limit: float = SIMILARITY_LIMIT
    # rank by the score's percentile among queries of similar length (core.evalset.scoring), not the raw score
    length_neutral: bool = True
    duplicate_above: float = DUPLICATE_ABOVE
    review_from: float = REVIEW_FROM
    # prebuilt clients ("chat", "embed") used instead of new ones, e.g. with another retry policy or sleep
    clients: dict = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self):
        if not isinstance(self.size, int) or isinstance(self.size, bool) or self.size < 1:
            raise SettingError("size must be a positive integer")
        if not 0 < self.review_from <= self.duplicate_above <= 1:
            raise SettingError("thresholds must satisfy 0 < review_from ≤ duplicate_above ≤ 1")

    def selection(self) -> SelectionSettings:
        return SelectionSettings(self.size, self.slices, self.buffer, self.similarity_limit,
                                 rank_by="score_length_neutral" if self.length_neutral else "score",
                                 balance_lengths=self.length_neutral)

    def chat_client(self) -> LLMClient | None:
        if self.model is None:
            return None
        return self.clients.get("chat") or LLMClient(self.model.endpoint())

    def embed_client(self) -> LLMClient | None:
        if self.model is None or not self.model.embed_model:
            return None
        return self.clients.get("embed") or LLMClient(self.model.endpoint(self.model.embed_model))

    def describe(self) -> dict:
        return {"size": self.size, "categories": list(self.categories) or "discovered",
                "exclude": list(self.exclude), "seed": self.seed, "domain": self.domain or "any",
                "model": self.model.describe() if self.model else "none (offline path)",
                "slices": [asdict(s) for s in self.slices], "reserves": self.buffer,
                "ranking": "length-neutral score" if self.length_neutral else "score",
                "similarity_limit": self.similarity_limit, "duplicate_above": self.duplicate_above,
                "review_from": self.review_from}


def parse_slices(specs: list[str]) -> tuple[SliceQuota, ...]:
    """``name=share:minimum`` overrides (e.g. ``procedural=0.4:5``, ``trap_unreleased=0.1:1``)."""
    by_name = {s.name: s for s in DEFAULT_SLICES}
    for spec in specs:
        name, sep, value = spec.partition("=")
        share, sep2, minimum = value.partition(":")
        if not sep or name not in by_name:
            raise SettingError(f"--slice {spec!r}: use NAME=SHARE[:MIN] with NAME one of {', '.join(by_name)}")
        try:
            quota = SliceQuota(name, by_name[name].tag, float(share),
                               int(minimum) if sep2 else by_name[name].minimum)
        except ValueError:
            raise SettingError(f"--slice {spec!r}: SHARE must be a number and MIN an integer") from None
        if not 0 <= quota.share <= 1 or quota.minimum < 0:
            raise SettingError(f"--slice {spec!r}: SHARE must lie in [0, 1] and MIN be ≥ 0")
        by_name[name] = quota
    return tuple(by_name.values())
