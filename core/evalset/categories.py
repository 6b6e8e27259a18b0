"""Category names: fuzzy matching of a model's answers, and the offline ways to categorise.

A returned name is matched to the known categories by, in order: exact equality; case-insensitive
equality; then the best ``difflib`` similarity ratio ≥ ``FUZZY_THRESHOLD`` (case-insensitive), or,
failing that, a known name contained in the answer or the answer contained in a known name (the
longest such name). Anything else is unmatched (the query goes to ``Other``).

Without a model, categories come from the pool's own ``category`` column when it has one; categories
given by the user are assigned by keyword (the category name, one of its words of ≥ 4 letters, or two
adjacent Chinese characters of it, appearing in the query; else ``Other``); otherwise they are
discovered by spherical k-means on the embeddings (``OFFLINE_CATEGORIES`` clusters), named by
their most distinctive words (c-TF-IDF, stop words left out) and shown with a typical query.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter

import numpy as np

from core.evalset.knn import _kmeans

OTHER = "Other"
CLASSIFICATION_FAILED = "classification_failed"
FUZZY_THRESHOLD = 0.66
OFFLINE_CATEGORIES = 8
SUBCATEGORY_THRESHOLD = 50  # categories larger than this are refined
MIN_SUBCATEGORY = 20
_WORD = re.compile(r"[^\W\d_]{4,}|[\u4e00-\u9fff]{2,}", re.UNICODE)
_HAN = re.compile(r"[\u4e00-\u9fff]")


def _words(text: str) -> list[str]:
    """Words of four letters or more, case-folded; a run of Chinese characters gives its character
    pairs (Chinese has no spaces, and a whole run is a sentence, not a name)."""
    out = []
    for w in _WORD.findall(text):
        if _HAN.match(w):
            out.extend(w[i:i + 2] for i in range(len(w) - 1))
        else:
            out.append(w.casefold())
    return out


def match_category(answer: str | None, known: list[str]) -> str | None:
    """The known category a model's answer names, or None."""
    if answer is None:
        return None
    text = str(answer).strip()
    if not text:
        return None
    if text in known:
        return text
    lower = text.casefold()
    for name in known:
        if name.casefold() == lower:
            return name
    best, best_ratio = None, 0.0
    for name in known:
        ratio = difflib.SequenceMatcher(None, lower, name.casefold()).ratio()
        if ratio > best_ratio:
            best, best_ratio = name, ratio
    if best is not None and best_ratio >= FUZZY_THRESHOLD:
        return best
    contained = [n for n in known if n.casefold() in lower or lower in n.casefold()]
    return max(contained, key=len) if contained else None


def with_other(categories: list[str]) -> list[str]:
    """The list without duplicates (case-insensitive), with ``Other`` last."""
    seen, out = set(), []
    for name in categories:
        name = str(name).strip()
        if name and name.casefold() not in seen and name.casefold() != OTHER.casefold():
            seen.add(name.casefold())
            out.append(name)
    return out + [OTHER]


def assign_by_keywords(texts: list[str], categories: list[str]) -> list[str]:
    """Offline assignment to given categories: name or a word of it found in the query, else Other."""
    patterns = []
    for name in categories:
        if name == OTHER:
            continue
        words = [name.casefold(), *_words(name)]
        patterns.append((name, words))
    out = []
    for text in texts:
        lower = text.casefold()
        hit = next((name for name, words in patterns if any(w in lower for w in words)), OTHER)
        out.append(hit)
    return out


# Words of four letters or more that say nothing about a query's topic (question words, auxiliaries,
# quantifiers, request verbs): left out of cluster names, which would otherwise read "best / always / does".
STOP_WORDS = frozenset("""
about above after again against also always another anything been before being below best better between
both came cannot come could does doing done down during each else even every ever from give gives good have
having here into just keep know like made make many more most much must need needs never only other over
please same should show some such take tell than that their them then there these they thing things this
those through under until very want well were what when where which while will with within without would
your yours really maybe something someone using used uses within explain describe write create list help
tips ways best simple easy different possible example examples question answer
""".split())


def cluster_names(texts: list[str], labels: np.ndarray, n_words: int = 3) -> dict[int, str]:
    """A name per cluster from its most distinctive words by class-based TF-IDF (c-TF-IDF, as in
    BERTopic): a word's frequency in the cluster × log(1 + average cluster size in words / the word's
    frequency over all clusters), stop words left out; ties by frequency, then alphabetically."""
    per: dict[int, Counter] = {}
    for text, label in zip(texts, labels.tolist()):
        per.setdefault(label, Counter()).update(w for w in _words(text) if w not in STOP_WORDS)
    overall: Counter = Counter()
    for counts in per.values():
        overall.update(counts)
    average = sum(overall.values()) / max(1, len(per))
    names: dict[int, str] = {}
    for label, counts in per.items():
        total = max(1, sum(counts.values()))
        score = {w: counts[w] / total * np.log(1 + average / overall[w]) for w in counts if counts[w] >= 2}
        best = sorted(score, key=lambda w: (-score[w], -counts[w], w))
        names[label] = " / ".join(best[:n_words]) or f"cluster {label + 1}"
    taken: Counter = Counter()
    for label in sorted(names):  # two clusters must not share a name
        taken[names[label]] += 1
        if taken[names[label]] > 1:
            names[label] = f"{names[label]} ({taken[names[label]]})"
    return names


def short(text: str, width: int = 80) -> str:
    """One line of at most ``width`` characters (an ellipsis marks a cut)."""
    line = " ".join(str(text).split())
    return line if len(line) <= width else line[:width - 1].rstrip() + "…"


def typical_queries(texts: list[str], embeddings: np.ndarray, categories: list[str]) -> dict[str, str]:
    """Per category, the query nearest the centroid of its embeddings: a sample that shows what the
    category's name stands for."""
    emb = np.asarray(embeddings, dtype=np.float64)
    cats = np.asarray(categories, dtype=object)
    out = {}
    for name in dict.fromkeys(categories):
        rows = np.flatnonzero(cats == name)
        centre = emb[rows].mean(axis=0)
        out[name] = texts[int(rows[np.argmax(emb[rows] @ centre)])]
    return out


def discover_offline(texts: list[str], embeddings: np.ndarray, n_categories: int = OFFLINE_CATEGORIES,
                     seed: int = 0) -> list[str]:
    """Category of every query from k-means clusters named by their distinctive words."""
    n = len(texts)
    if n == 0:
        return []
    k = max(1, min(n_categories, n // 5 or 1))
    if k == 1:
        return [OTHER] * n
    labels = _cluster(embeddings, k, seed)
    names = cluster_names(texts, labels)
    return [names[label] for label in labels.tolist()]


def refine_offline(texts: list[str], embeddings: np.ndarray, seed: int = 0) -> list[str]:
    """Subcategories of one category: k-means with k = n // (2 × MIN_SUBCATEGORY), groups smaller than
    MIN_SUBCATEGORY merged into the largest; '' when the category is not refined."""
    n = len(texts)
    k = min(6, n // (2 * MIN_SUBCATEGORY))
    if n <= SUBCATEGORY_THRESHOLD or k < 2:
        return [""] * n
    labels = _cluster(embeddings, k, seed)
    sizes = np.bincount(labels, minlength=k)
    largest = int(np.argmax(sizes))
    labels = np.where(sizes[labels] < MIN_SUBCATEGORY, largest, labels)
    if len(np.unique(labels)) < 2:
        return [""] * n
    names = cluster_names(texts, labels, n_words=2)
    return [names[label] for label in labels.tolist()]


def _cluster(embeddings: np.ndarray, k: int, seed: int) -> np.ndarray:
    centroids = _kmeans(np.asarray(embeddings, dtype=np.float32), k, np.random.default_rng(seed))
    return np.argmax(embeddings @ centroids.T, axis=1)
