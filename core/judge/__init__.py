"""Judged preferences against one baseline (AlpacaEval, Arena-Hard, MT-bench pairwise): AlpacaEval's win
rates and their bootstrap intervals (:mod:`core.judge.winrate`), the length-controlled win rate and prompt
difficulty (:mod:`core.judge.length_control`, :mod:`core.judge.difficulty`, docs/methods.md §12), one call
that puts them together (:func:`core.judge.analysis.judge`) and its JSON, markdown and CSV
(:mod:`core.judge.render`)."""
