"""What the end-to-end workflow tests share: an AlpacaEval-like query pool, a models file for fake providers,
answers that never name their model, and simulated annotators voting through the core campaign API.

The annotators judge the way people do, from what the Vote page shows (:class:`core.campaign.ServedItem`):
the test's :class:`Oracle` knows which answer text came from which model (the hidden truth a careful
reader recovers by reading) and which golden answer is right. Every response time is set through the
``now`` arguments of ``serve_next`` and ``record_vote``, on a clock of the annotator's own, so a "fast"
annotator costs no real time.
"""

from __future__ import annotations

import math
import random
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from core.campaign import CHOICES, ServedItem, record_vote, serve_next

# AlpacaEval's `dataset` column names the source of each instruction.
SOURCES = ("helpful_base", "koala", "oasst", "selfinstruct", "vicuna")
SUBJECTS = ("a sourdough starter", "the French Revolution", "binary search", "a job interview", "compound interest",
            "photosynthesis", "a marathon plan", "the Pythagorean theorem", "a wedding toast", "tidal energy",
            "a haiku about autumn", "Rust ownership", "a vegetable garden", "jet lag", "the Roman Empire")
TASKS = ("Explain {s} to a ten-year-old in three sentences.",
         "Write a short, friendly email asking a colleague for help with {s}.",
         "List five common mistakes people make with {s}, and how to avoid each.",
         "Give me a step-by-step plan for learning about {s} in one week.")


def alpaca_like_pool(n: int = 60, seed: int = 0) -> pd.DataFrame:
    """``n`` distinct instructions in AlpacaEval's columns (``instruction``, ``dataset``), shuffled."""
    rows = [(task.format(s=subject), SOURCES[(i + j) % len(SOURCES)])
            for i, subject in enumerate(SUBJECTS) for j, task in enumerate(TASKS)]
    if n > len(rows):
        raise ValueError(f"the pool has {len(rows)} distinct instructions, not {n}")
    random.Random(seed).shuffle(rows)
    return pd.DataFrame(rows[:n], columns=["instruction", "dataset"])


def write_models(path: Path, models: dict[str, tuple[str, str, str]], key_env: str, concurrency: int = 1) -> Path:
    """A models file: display name -> (provider, base_url, model id sent to the endpoint)."""
    blocks = ["[defaults]\nmax_tokens = 256\n"]
    for name, (provider, base_url, model_id) in models.items():
        blocks.append(f'[[models]]\nname = "{name}"\nprovider = "{provider}"\nbase_url = "{base_url}"\n'
                      f'model = "{model_id}"\napi_key_env = "{key_env}"\nconcurrency = {concurrency}\n')
    path.write_text("\n".join(blocks))
    return path


def styled_responder(styles: dict[str, str]) -> Callable[[dict], str]:
    """Answers in a style of the model id's own that never names the model (the Vote page must not)."""
    def answer(request: dict) -> str:
        prompt = request["messages"][-1]["content"]
        return f"{styles[request['model']]} reply. Here is my answer to: {prompt}"
    return answer


@dataclass
class Oracle:
    """The hidden truth behind a served item: which model wrote each answer text, which golden answer is right."""

    model_of_answer: dict[str, str]
    correct_golden: set[str]
    strength: dict[str, float]

    @classmethod
    def from_store(cls, conn: sqlite3.Connection, strength: dict[str, float]) -> Oracle:
        # The cleaned texts the Vote page shows, as the campaign stored them.
        texts = dict(conn.execute("SELECT clean_text, model FROM campaign_answers"))
        correct = {r[0] for r in conn.execute("SELECT correct_clean FROM campaign_golden")}
        return cls(texts, correct, strength)

    def golden_side(self, item: ServedItem) -> str | None:
        """"A" or "B" for the correct side of a golden item, None for a real item."""
        if item.answer_a in self.correct_golden:
            return "A"
        if item.answer_b in self.correct_golden:
            return "B"
        return None

    def p_left(self, item: ServedItem) -> float:
        """Bradley–Terry probability that the left answer is the better one."""
        a, b = (self.strength[self.model_of_answer[t]] for t in (item.answer_a, item.answer_b))
        return 1.0 / (1.0 + math.exp(b - a))


@dataclass
class Annotator:
    """A simulated annotator: ``kind`` is careful (votes by the true strength), reversed (the opposite, and
    the wrong golden answer on purpose) or random_fast (a random choice in about half a second)."""

    kind: str
    token: str
    seed: int
    clock: float = 1_700_000_000.0
    rng: random.Random = field(init=False)
    votes: int = 0
    golden: int = 0

    def __post_init__(self):
        if self.kind not in ("careful", "reversed", "random_fast"):
            raise ValueError(f"unknown annotator kind {self.kind!r}")
        self.rng = random.Random(self.seed)

    def choose(self, item: ServedItem, oracle: Oracle) -> str:
        if self.kind == "random_fast":
            return self.rng.choice(("A", "B", "A", "B", "Tie"))
        side = oracle.golden_side(item)
        if side is not None:
            return side if self.kind == "careful" else ("B" if side == "A" else "A")
        left_better = self.rng.random() < oracle.p_left(item)
        return "A" if left_better == (self.kind == "careful") else "B"

    def response_s(self) -> float:
        return self.rng.uniform(0.3, 0.7) if self.kind == "random_fast" else self.rng.uniform(8.0, 25.0)

    def judge(self, conn: sqlite3.Connection, oracle: Oracle, items: int) -> int:
        """Judge up to ``items`` items (fewer when the target is reached); returns how many were stored."""
        stored = 0
        for _ in range(items):
            item = serve_next(conn, self.token, now=self.clock)
            if item is None:
                break
            self.clock += self.response_s()
            golden = oracle.golden_side(item) is not None
            # A golden item is asked on every dimension too; a person answers each the same way.
            choices = {d: self.choose(item, oracle) if i == 0 or not golden else None
                       for i, d in enumerate(item.dimensions)}
            first = choices[item.dimensions[0]]
            outcomes = {d: CHOICES[c if c is not None else first] for d, c in choices.items()}
            assert record_vote(conn, self.token, item.assignment_id, outcomes, now=self.clock)
            self.clock += 1.0  # reading the next question
            stored += 1
            self.golden += golden
        self.votes += stored
        return stored


def interleave(conn: sqlite3.Connection, oracle: Oracle, annotators: Sequence[Annotator], items: int,
               step: int = 3) -> None:
    """Every annotator judges ``items`` items, ``step`` at a time in turn (as people voting at once do)."""
    left = {a.token: items for a in annotators}
    while any(left.values()):
        for a in annotators:
            n = min(step, left[a.token])
            if n:
                done = a.judge(conn, oracle, n)
                left[a.token] = 0 if done < n else left[a.token] - n
