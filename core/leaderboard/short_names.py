"""Short display names for ids (model ids in markdown tables) that stay distinct.

Cutting every id to its first 20 characters makes ``meta-llama/Llama-3.1-8B-Instruct`` and
``meta-llama/Llama-3.1-8B`` both ``meta-llama/Llama-3.1``, and 32 Pythia runs all
``EleutherAI/pythia-v1``. :func:`short_names` keeps that cut for every id it leaves distinct, and
gives the ids that collide the part that tells them apart: the start, ``…`` and the shortest tail
that begins a word (``meta-llama/…Instruct``, ``meta-llama/Llama-…8B``). When no tail that short
separates them, the name may exceed the width (``…1.4b-deduped (5-shot)``), and as a last resort it
is the whole id: distinct ids always get distinct names.

The result depends only on the set of ids (not on their order), so the same ids read the same in
every table and every run.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

ELLIPSIS = "…"
# A tail starts a word after one of these (not after "." so that "1.4b" stays one word).
_SEPARATORS = frozenset("/-_ :()[]@|,+=")


def short_names(ids: Iterable[str], width: int = 20) -> dict[str, str]:
    """``{id: display name}``: the id itself when it fits in ``width`` characters; otherwise its first
    ``width`` characters when no other id shares them, else the first of :func:`_candidates` that no
    other id takes. Distinct ids always get distinct names."""
    if width < 2:
        raise ValueError(f"width must be at least 2 characters, not {width}")
    unique = sorted({str(i) for i in ids})
    reserved = set(unique)  # no id is shown as another id's full name
    names = {i: i for i in unique if len(i) <= width}
    pending = {}
    for i in unique:
        if len(i) > width:
            # Another id's full text is never proposed, so each id's last candidate (itself) is free.
            options = [c for c in _candidates(i, width) if c not in reserved]
            pending[i] = list(dict.fromkeys(options)) + [i]
    taken = set(names.values())
    level = 0
    while pending:
        # Every pending id proposes its candidate of this level; a name proposed once and not yet
        # taken is accepted, the others move on to their next candidate together.
        proposals = {i: options[min(level, len(options) - 1)] for i, options in pending.items()}
        counts = Counter(proposals.values())
        for i, name in proposals.items():
            if counts[name] == 1 and name not in taken:
                names[i] = name
                del pending[i]
        taken.update(names[i] for i in proposals if i in names)
        level += 1
    return names


def _candidates(text: str, width: int) -> list[str]:
    """Display names of a ``text`` longer than ``width``, most like the plain cut first."""
    words = _word_tails(text)
    fitting = [text[:width - 1 - len(t)] + ELLIPSIS + t for t in words if len(t) <= width - 1]
    longer = [ELLIPSIS + t for t in words if len(t) > width - 1]
    # Tails that cut a word (only reached when no word tail tells the ids apart).
    anywhere = [text[:width - 1 - n] + ELLIPSIS + text[-n:] for n in range(1, width)]
    return [text[:width], *fitting, *longer, *anywhere]


def _word_tails(text: str) -> list[str]:
    """The suffixes of ``text`` that start a word, shortest first (the whole text excluded)."""
    return [text[i:] for i in range(len(text) - 1, 0, -1)
            if text[i - 1] in _SEPARATORS and text[i] not in _SEPARATORS]
