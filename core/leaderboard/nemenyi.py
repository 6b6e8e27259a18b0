"""Nemenyi post-hoc results told at any number of models (Demšar 2006, docs/methods.md §8).

With k models there are k(k − 1)/2 pairs: a list of the pairs that differ reads well for five models
and not at all for sixty (~1,300 pairs). Demšar's critical-difference diagram shows instead the
groups of models whose average ranks lie within the critical difference of each other; the sentence
here summarises those same groups, and lists single pairs only when they are few.
"""

from __future__ import annotations

from collections.abc import Mapping

from core.formats import markdown_text

PAIRS_LISTED = 10  # up to this many differing pairs are named one by one
GROUPS_LISTED = 6  # beyond this many groups, the rest are counted


def cd_groups(mean_ranks: Mapping[str, float], cd: float) -> list[tuple[str, ...]]:
    """Maximal runs of models (in rank order) whose average ranks lie within the critical difference:
    the thick bars of a Demšar (2006) critical-difference diagram. Runs inside another are left out."""
    order = sorted(mean_ranks, key=lambda m: (mean_ranks[m], m))
    groups: list[tuple[str, ...]] = []
    for start in range(len(order)):
        stop = start
        while stop + 1 < len(order) and mean_ranks[order[stop + 1]] - mean_ranks[order[start]] <= cd:
            stop += 1
        run = tuple(order[start:stop + 1])
        if len(run) > 1 and not any(set(run) <= set(g) for g in groups):
            groups.append(run)
    return groups


def _group_text(group: tuple[str, ...], position: dict[str, int]) -> str:
    first, last = group[0], group[-1]
    names = ", ".join(markdown_text(m) for m in group) if len(group) <= 3 else \
        f"{markdown_text(first)} … {markdown_text(last)}"
    return f"ranks {position[first]}–{position[last]} ({names})"


def nemenyi_sentence(mean_ranks: Mapping[str, float], cd: float, different_pairs, alpha: float) -> str:
    """One markdown-safe sentence: the critical difference, how many pairs differ, and either those
    pairs (at most :data:`PAIRS_LISTED`) or the groups the test cannot separate, best first."""
    k = len(mean_ranks)
    total = k * (k - 1) // 2
    head = f"Nemenyi critical difference {cd:.3f} at α = {alpha:g}: {len(different_pairs):,} of {total:,} pairs differ"
    if len(different_pairs) <= PAIRS_LISTED:
        pairs = ", ".join(f"{markdown_text(a)} vs {markdown_text(b)}" for a, b in different_pairs)
        return f"{head}{' (' + pairs + ')' if pairs else ''}."
    order = sorted(mean_ranks, key=lambda m: (mean_ranks[m], m))
    position = {m: i + 1 for i, m in enumerate(order)}
    groups = cd_groups(mean_ranks, cd)
    alone = [m for m in order if not any(m in g for g in groups)]
    if not groups:
        return f"{head}: every model is separated from every other."
    shown = "; ".join(_group_text(g, position) for g in groups[:GROUPS_LISTED])
    more = f"; and {len(groups) - GROUPS_LISTED} more" if len(groups) > GROUPS_LISTED else ""
    single = f" {len(alone)} model{'s' if len(alone) != 1 else ''} stand{'s' if len(alone) == 1 else ''} apart " \
             f"from all others." if alone else ""
    return (f"{head}. Models whose average ranks lie within the critical difference cannot be told apart; "
            f"{len(groups)} such group{'s' if len(groups) != 1 else ''} (ranked by average rank, "
            f"overlapping): {shown}{more}.{single}")
