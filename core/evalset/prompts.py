"""Every instruction sent to a model by the eval-set builder, each with the strict JSON schema of the
answer it asks for. Settings per call (temperature, max tokens, batch sizes) live here too."""

from __future__ import annotations

import json

SYSTEM = "You help build a representative evaluation set of user queries. Answer with JSON only."

RELEVANCE = {"temperature": 0.1, "max_tokens": 20}
REWRITE = {"temperature": 0.1, "max_tokens": 120}
REVIEW = {"temperature": 0.1, "max_tokens": 2048, "batch": 60}
CANONICAL = {"temperature": 0.1, "max_tokens": 50}
DISCOVER = {"temperature": 0.1, "max_tokens": 1024, "sample": 1000}
CLASSIFY = {"temperature": 0.1, "max_tokens": 2048, "batch": 20}
EXCLUSIONS = {"temperature": 0.1, "max_tokens": 400}
SUBCATEGORIES = {"temperature": 0.3, "max_tokens": 2048, "sample": 200}
SCORE = {"temperature": 0.1, "max_tokens": 2048, "batch": 30}


def _obj(properties: dict, name: str) -> dict:
    return {"name": name, "schema": {"type": "object", "properties": properties, "required": list(properties),
                                     "additionalProperties": False}}


def _items(properties: dict) -> dict:
    return {"type": "array", "items": {"type": "object", "properties": properties, "required": list(properties),
                                       "additionalProperties": False}}


def _numbered(texts: list[str]) -> str:
    return "\n".join(f"{i}\t{json.dumps(t, ensure_ascii=False)}" for i, t in enumerate(texts))


RELEVANCE_SCHEMA = _obj({"relevant": {"type": "string", "enum": ["yes", "no"]}}, "relevance")
REWRITE_SCHEMA = _obj({"rewritten": {"type": "string"}}, "rewrite")
REVIEW_SCHEMA = _obj({"pairs": _items({"id": {"type": "integer"}, "same": {"type": "boolean"}})}, "review")
CANONICAL_SCHEMA = _obj({"choice": {"type": "integer"}}, "canonical")
DISCOVER_SCHEMA = _obj({"categories": {"type": "array", "items": {"type": "string"}}}, "categories")
CLASSIFY_SCHEMA = _obj({"labels": _items({"id": {"type": "integer"}, "category": {"type": "string"}})},
                       "classification")
EXCLUSIONS_SCHEMA = _obj({"exclude": {"type": "array", "items": {"type": "string"}}}, "exclusions")
SUBCATEGORIES_SCHEMA = _obj({"subcategories": {"type": "array", "items": {"type": "string"}}}, "subcategories")
SCORE_SCHEMA = _obj({"scores": _items({"id": {"type": "integer"}, "specificity": {"type": "integer"},
                                       "completeness": {"type": "integer"}, "depth": {"type": "integer"},
                                       "is_procedural": {"type": "boolean"},
                                       "needs_structured_output": {"type": "boolean"},
                                       "has_heavy_constraints": {"type": "boolean"},
                                       "is_trap_unreleased": {"type": "boolean"}})}, "scores")


def messages(user: str) -> list[dict]:
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def relevance(query: str, domain: str) -> list[dict]:
    return messages(
        f"Domain: {domain or 'any'}.\nDecide strictly whether this query belongs in an evaluation set for that "
        "domain. Answer \"no\" when it is unrelated to the domain, too simple (\"how to change name\", \"is it "
        "fun\") or semantically incomplete; \"yes\" only for a complete, specific question with enough depth.\n"
        'Return {"relevant": "yes"} or {"relevant": "no"}.\nQuery: ' + json.dumps(query, ensure_ascii=False))


def rewrite(query: str) -> list[dict]:
    return messages(
        "Rewrite the query into a concise, search-friendly form: keep its core intent and every constraint, "
        "remove filler, keep its language. Return {\"rewritten\": \"...\"}.\nQuery: "
        + json.dumps(query, ensure_ascii=False))


def review(pairs: list[tuple[str, str]]) -> list[dict]:
    lines = "\n".join(f"{i}\tA: {json.dumps(a, ensure_ascii=False)}\tB: {json.dumps(b, ensure_ascii=False)}"
                      for i, (a, b) in enumerate(pairs))
    return messages(
        "For each numbered pair, decide whether A and B ask for the same information (so one answer serves "
        "both). Return {\"pairs\": [{\"id\": <number>, \"same\": true|false}, ...]} with one entry per pair.\n"
        + lines)


def canonical(texts: list[str]) -> list[dict]:
    return messages(
        "These queries are duplicates of each other. Choose the most representative one: the most specific, "
        "natural and complete. Return {\"choice\": <number>}.\n" + _numbered(texts))


def discover(sample: list[str], low: int = 8, high: int = 12) -> list[dict]:
    return messages(
        f"Read these user queries and propose {low} to {high} top-level intent categories that together cover "
        "at least 95% of them, with clear boundaries between categories and moderate granularity. Do not "
        "include \"Other\" (it is added for you). Return {\"categories\": [\"...\", ...]}.\n" + _numbered(sample))


def classify(texts: list[str], categories: list[str]) -> list[dict]:
    return messages(
        "Categories: " + json.dumps(categories, ensure_ascii=False) + "\nAssign each numbered query to exactly "
        "one of these categories (use \"Other\" when none fits). Return {\"labels\": [{\"id\": <number>, "
        "\"category\": \"<name>\"}, ...]} with one entry per query.\n" + _numbered(texts))


def exclusions(categories: list[tuple[str, int, list[str]]]) -> list[dict]:
    lines = "\n".join(f"- {json.dumps(name, ensure_ascii=False)} ({n} queries), e.g. "
                      + "; ".join(json.dumps(s, ensure_ascii=False) for s in samples)
                      for name, n, samples in categories)
    return messages(
        "Which of these query categories are unsuitable for evaluating model answers (account problems, "
        "customer support, requests no model can answer)? Return {\"exclude\": [\"<category name>\", ...]} "
        "(an empty list when all are suitable).\n" + lines)


def subcategories(category: str, sample: list[str], min_share: float) -> list[dict]:
    return messages(
        f"All these queries belong to the category {json.dumps(category, ensure_ascii=False)}. Propose 2 to 6 "
        "mutually exclusive subcategories with short, general names that together cover them; each should hold "
        f"at least {min_share:.0%} of the queries. Return {{\"subcategories\": [\"...\", ...]}}.\n"
        + _numbered(sample))


def score(texts: list[str]) -> list[dict]:
    return messages(
        "Score each numbered query from 0 to 100 on specificity (how precisely it states what it asks), "
        "completeness (whether it carries the context an answer needs) and depth (knowledge and reasoning an "
        "answer takes), and tag it: is_procedural (asks for steps or a process), needs_structured_output "
        "(asks for a table, list or comparison), has_heavy_constraints (several constraints or negations), "
        "is_trap_unreleased (asks about unreleased content or predictions). Return {\"scores\": [{\"id\": "
        "<number>, \"specificity\": 0-100, \"completeness\": 0-100, \"depth\": 0-100, \"is_procedural\": "
        "bool, \"needs_structured_output\": bool, \"has_heavy_constraints\": bool, \"is_trap_unreleased\": "
        "bool}, ...]} with one entry per query.\n" + _numbered(texts))
