"""Judged preferences against one baseline (AlpacaEval, Arena-Hard, MT-bench pairwise): AlpacaEval's win
rates and their bootstrap intervals (:mod:`core.judge.winrate`), the length-controlled win rate
(:mod:`core.judge.length_control`), one call that puts them together (:func:`core.judge.analysis.judge`)
and its JSON, markdown and CSV (:mod:`core.judge.render`)."""
