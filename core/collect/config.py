"""The models file: which models answer, where they live, how they are called and how many requests each
provider takes at once.

A models file is TOML::

    [defaults]                      # generation parameters for every model (optional)
    temperature = 0.7
    max_tokens = 1024

    [providers.openai]              # per-provider settings (optional)
    concurrency = 10                # requests in flight at once to this provider, all its models together

    [[models]]
    name = "gpt-4o"                 # display name: the model's name in answers files and rankings
    provider = "openai"             # groups models that share one rate limit
    base_url = "https://api.openai.com/v1"
    model = "gpt-4o-2024-08-06"     # the model id sent to the endpoint
    api_key_env = "OPENAI_API_KEY"  # NAME of the environment variable holding the key (omit for local servers)
    params = { temperature = 0.2 }  # overrides [defaults] for this model (any chat parameter)
    concurrency = 8                 # optional: at most this many of this model's requests at once
    timeout_s = 60                  # optional: seconds before a request times out

Concurrency per provider, unless ``[providers.NAME] concurrency`` says otherwise: OpenAI and Azure 10,
Gemini 5, Doubao 3, any other provider 5. A model's own ``concurrency`` can only lower its share: its
requests also count against its provider's limit. Keys never go into the file: only the variable's name.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.errors import EvalBoardError
from core.llm.client import Endpoint

PROVIDER_CONCURRENCY = {"openai": 10, "azure": 10, "gemini": 5, "doubao": 3}
DEFAULT_CONCURRENCY = 5
MODEL_FIELDS = {"name", "provider", "base_url", "model", "api_key_env", "params", "concurrency", "timeout_s"}
PROVIDER_FIELDS = {"concurrency"}
TOP_LEVEL = {"defaults", "providers", "models"}


class ConfigError(EvalBoardError, ValueError):
    """A models file that cannot be used; the message names the entry and the field."""

    def __init__(self, source: str, problems: list[str]):
        self.source = source
        self.problems = list(problems)
        lines = "\n".join(f"  - {p}" for p in self.problems)
        super().__init__(f"{source}: invalid models file ({len(self.problems)} problem"
                         f"{'s' if len(self.problems) != 1 else ''}):\n{lines}")


@dataclass(frozen=True)
class ModelSpec:
    name: str
    provider: str
    base_url: str
    model: str
    api_key_env: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)  # defaults merged with the model's own
    concurrency: int | None = None
    timeout_s: float = 60.0

    def endpoint(self, provider_limit: int) -> Endpoint:
        share = min(self.concurrency or provider_limit, provider_limit)
        return Endpoint(self.base_url, self.model, self.api_key_env, timeout_s=self.timeout_s, concurrency=share)


@dataclass(frozen=True)
class CollectConfig:
    models: tuple[ModelSpec, ...]
    provider_limits: Mapping[str, int]  # every provider the models use -> requests at once
    source: str = "models file"

    def limit_of(self, model: ModelSpec) -> int:
        return self.provider_limits[model.provider]

    def model_limit(self, model: ModelSpec) -> int:
        """Requests of this model in flight at most: its own limit within its provider's."""
        return min(model.concurrency or self.limit_of(model), self.limit_of(model))

    def table(self, environ: Mapping[str, str]) -> list[dict]:
        """One row per model for display: the key appears only as its variable's name and whether it is set
        (``key_set`` None: no key needed)."""
        return [{"name": m.name, "provider": m.provider, "model": m.model, "base_url": m.base_url,
                 "api_key_env": m.api_key_env or "(none: local server)",
                 "key_set": None if m.api_key_env is None else bool(environ.get(m.api_key_env)),
                 "concurrency": self.model_limit(m), "provider_limit": self.limit_of(m),
                 "params": ", ".join(f"{k}={v}" for k, v in sorted(m.params.items()))} for m in self.models]


def default_concurrency(provider: str) -> int:
    return PROVIDER_CONCURRENCY.get(provider.strip().lower(), DEFAULT_CONCURRENCY)


def load_models(source: str | Path | bytes, name: str | None = None) -> CollectConfig:
    """Read and check a models file: a path, or the bytes of an upload (named ``name``)."""
    if isinstance(source, (bytes, bytearray)):
        label = name or "models file"
        try:
            text = bytes(source).decode("utf-8-sig")
        except UnicodeDecodeError:
            raise ConfigError(label, ["the file is not UTF-8 text"]) from None
    else:
        path = Path(source)
        label = name or str(path)
        if not path.is_file():
            raise ConfigError(label, ["no such file"])
        try:
            text = path.read_text(encoding="utf-8-sig")
        except UnicodeDecodeError:
            raise ConfigError(label, ["the file is not UTF-8 text"]) from None
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(label, [f"not valid TOML: {exc}"]) from None
    return parse_models(document, label)


def parse_models(document: Mapping[str, Any], source: str = "models file") -> CollectConfig:
    problems: list[str] = []
    unknown = sorted(set(document) - TOP_LEVEL)
    if unknown:
        problems.append(f"unknown section(s) {', '.join(unknown)}; expected defaults, providers, models")
    defaults = document.get("defaults", {})
    if not isinstance(defaults, Mapping):
        problems.append("[defaults] must be a table of generation parameters")
        defaults = {}
    providers = document.get("providers", {})
    if not isinstance(providers, Mapping):
        problems.append("[providers] must be a table of [providers.NAME] tables")
        providers = {}
    overrides: dict[str, int] = {}
    for provider, settings in providers.items():
        where = f"[providers.{provider}]"
        if not isinstance(settings, Mapping):
            problems.append(f"{where} must be a table")
            continue
        for key in sorted(set(settings) - PROVIDER_FIELDS):
            problems.append(f"{where}: unknown field '{key}' (only concurrency)")
        if "concurrency" in settings:
            limit = settings["concurrency"]
            if not _positive_int(limit):
                problems.append(f"{where}: field 'concurrency' must be a positive integer, not {limit!r}")
            else:
                overrides[provider.strip().lower()] = limit
    entries = document.get("models")
    if not isinstance(entries, list) or not entries:
        problems.append("no [[models]] entries: list at least one model")
        entries = []
    models: list[ModelSpec] = []
    seen: dict[str, int] = {}
    for number, entry in enumerate(entries, start=1):
        spec = _parse_model(entry, number, defaults, problems)
        if spec is None:
            continue
        if spec.name in seen:
            problems.append(f"model {number} ('{spec.name}'): field 'name' repeats model {seen[spec.name]}; "
                            "display names must be unique")
            continue
        seen[spec.name] = number
        models.append(spec)
    if problems:
        raise ConfigError(source, problems)
    limits = {m.provider: overrides.get(m.provider, default_concurrency(m.provider)) for m in models}
    return CollectConfig(tuple(models), limits, source)


def _parse_model(entry: Any, number: int, defaults: Mapping[str, Any], problems: list[str]) -> ModelSpec | None:
    if not isinstance(entry, Mapping):
        problems.append(f"model {number}: must be a [[models]] table")
        return None
    name = entry.get("name")
    label = f"model {number}" + (f" ('{name.strip()}')" if isinstance(name, str) and name.strip() else "")
    before = len(problems)
    for key in sorted(set(entry) - MODEL_FIELDS):
        problems.append(f"{label}: unknown field '{key}' (expected {', '.join(sorted(MODEL_FIELDS))})")
    for key in ("name", "provider", "base_url", "model"):
        value = entry.get(key)
        if not isinstance(value, str) or not value.strip():
            problems.append(f"{label}: field '{key}' is required and must be a non-empty string")
    base_url = entry.get("base_url")
    if isinstance(base_url, str) and base_url.strip() and not base_url.startswith(("http://", "https://")):
        problems.append(f"{label}: field 'base_url' must start with http:// or https://, not {base_url!r}")
    key_env = entry.get("api_key_env")
    if key_env is not None and (not isinstance(key_env, str) or not key_env.strip() or "=" in key_env
                                or key_env.startswith(("sk-", "Bearer"))):
        problems.append(f"{label}: field 'api_key_env' must be the NAME of an environment variable "
                        "(e.g. OPENAI_API_KEY), never the key itself")
    params = entry.get("params", {})
    if not isinstance(params, Mapping):
        problems.append(f"{label}: field 'params' must be a table, e.g. params = {{ temperature = 0.2 }}")
        params = {}
    concurrency = entry.get("concurrency")
    if concurrency is not None and not _positive_int(concurrency):
        problems.append(f"{label}: field 'concurrency' must be a positive integer, not {concurrency!r}")
    timeout = entry.get("timeout_s", 60.0)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not math.isfinite(timeout) \
            or timeout <= 0:
        problems.append(f"{label}: field 'timeout_s' must be a positive number of seconds, not {timeout!r}")
    if len(problems) > before:
        return None
    return ModelSpec(name=entry["name"].strip(), provider=entry["provider"].strip().lower(),
                     base_url=base_url.strip().rstrip("/"), model=entry["model"].strip(),
                     api_key_env=key_env.strip() if key_env else None, params={**defaults, **params},
                     concurrency=concurrency, timeout_s=float(timeout))


def _positive_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1
