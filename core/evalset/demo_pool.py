"""A reproducible synthetic query pool: topics, templates, reworded near-duplicates, exact repeats
and junk, so that every stage of the builder has something to do (demos, tests, benchmarks)."""

from __future__ import annotations

import numpy as np
import pandas as pd

TOPICS: dict[str, tuple[list[str], list[str]]] = {
    "Cooking": (["braised pork", "sourdough bread", "green curry", "beef stew", "miso soup", "apple pie",
                 "pad thai", "risotto", "dumplings", "roast chicken", "lasagna", "ramen broth"],
                ["How do I make {x} at home step by step?", "What is the best recipe for {x} without an oven?",
                 "Why does my {x} always turn out dry, and how can I fix it?",
                 "Give me a shopping list in a table for {x} for six people",
                 "How long should I cook {x}, and at what temperature?"]),
    "Travel": (["Kyoto", "Lisbon", "Patagonia", "Iceland", "Marrakesh", "Vancouver", "Hanoi", "Tuscany",
                "Cape Town", "Istanbul", "Oaxaca", "Tasmania"],
               ["Plan a three day itinerary for {x} on a budget with no car",
                "What is the best time of year to visit {x} and why?",
                "Which neighbourhoods in {x} are safest for a solo traveller at night?",
                "Compare trains and buses for getting around {x} in a table",
                "What documents do I need to travel to {x} from Canada?"]),
    "Programming": (["Python", "Rust", "SQL", "JavaScript", "Go", "C++", "Kotlin", "Haskell", "Bash",
                     "TypeScript", "Scala", "Julia"],
                    ["How do I read a large CSV file in {x} without running out of memory?",
                     "Explain the difference between threads and async in {x} with examples",
                     "Write a function in {x} that merges two sorted lists, no recursion allowed",
                     "Why is my {x} program slower than expected when looping over a list?",
                     "What are the steps to set up unit tests for a {x} project?"]),
    "Personal finance": (["index funds", "a mortgage", "an emergency fund", "retirement savings",
                          "student loans", "credit card debt", "a car loan", "bonds", "dividend stocks",
                          "a health savings account", "real estate", "gold"],
                         ["Should I put my savings into {x}, and what are the risks?",
                          "How do I start with {x} if I only have 200 dollars a month?",
                          "Compare {x} with a savings account in a table",
                          "What are the tax rules for {x} for someone self-employed?",
                          "Step by step, how do I pay off {x} faster?"]),
    "Health": (["back pain", "insomnia", "a sprained ankle", "high blood pressure", "seasonal allergies",
                "migraines", "a sore throat", "knee pain", "low iron", "dehydration", "stress", "acne"],
               ["What are home remedies for {x} that do not involve medication?",
                "When should I see a doctor about {x}?",
                "What exercises help with {x}, and how often should I do them?",
                "Explain the common causes of {x} in simple terms",
                "Make a weekly plan in a table to manage {x}"]),
    "Account support": (["my password", "my email address", "two factor login", "my subscription",
                         "my username", "a refund"],
                        ["How do I change {x} on my account?", "I cannot reset {x}, what should I do?"]),
    "中文问答": (["红烧肉", "饺子", "长城", "高铁票", "春节", "普洱茶", "麻婆豆腐", "西湖"],
             ["请问{x}应该怎么做才最地道？", "关于{x}有哪些需要注意的事项，请列表说明",
              "第一次接触{x}，有什么详细的入门步骤？"]),
}
FILLERS = ["", "please ", "hey, ", "quick question: ", "can you tell me ", ""]
ENDINGS = ["", "", " thanks", "??", "!", " :)"]
CONTEXTS = ["for a complete beginner", "in winter", "with two kids", "on a tight budget", "in under an hour",
            "for someone over sixty", "while living in a small flat", "as a student", "after a long illness",
            "for a wedding", "during a heatwave", "with no internet access", "for a team of ten",
            "without any special equipment", "in a country I do not know", "for my elderly parents",
            "on weekends only", "if I am left-handed", "with a vegetarian partner", "at high altitude",
            "for a school project", "when I am very tired", "while travelling for work", "on a rainy day",
            "for a charity event", "in my second language", "after moving abroad", "with a bad knee",
            "before a job interview", "for a first date", "during exam season", "with a dog at home"]
ASKERS = ["", "My friend asked me this. ", "I am a nurse. ", "I work nights. ", "I am new to this. ",
          "I tried twice already. ", "Context: I live in Spain. ", "Asking for my brother. ",
          "I am seventy years old. ", "I have read the guides. ", "Short answers please. ",
          "I am a teacher. ", "We are a family of five. ", "I am recovering from flu. "]
JUNK = ["hi", "ok", "???", "🙂🙂🙂🙂🙂🙂", "....!!!!....", "asdf", "lol", "👍👍👍 ok 👍👍👍", "1234"]


def demo_pool(n: int = 1000, seed: int = 0, detail_words: int = 0) -> pd.DataFrame:
    """``n`` queries (``query_id``, ``query``): templated questions, reworded variants of earlier ones
    (~10%), exact repeats in another case/punctuation (~5%) and junk (~3%). ``detail_words`` > 0 ends
    each templated question with that many words from a 5,000-word made-up vocabulary, so that a large
    pool is mostly distinct queries (as real pools are) rather than template variations."""
    rng = np.random.default_rng(seed)
    syllables = ["ka", "lo", "mi", "ru", "te", "sa", "vo", "ni", "pe", "zu", "da", "fi", "go", "he", "ju"]
    vocabulary = ["".join(rng.choice(syllables, size=3)) + str(i % 7) for i in range(5000)] if detail_words else []
    topics = list(TOPICS)
    weights = np.array([len(TOPICS[t][0]) * len(TOPICS[t][1]) for t in topics], dtype=float)
    weights /= weights.sum()
    out: list[str] = []
    kinds = rng.choice(4, size=n, p=[0.82, 0.10, 0.05, 0.03])
    for i in range(n):
        kind = kinds[i] if out else 0
        if kind == 3:
            out.append(JUNK[rng.integers(len(JUNK))])
        elif kind == 2:
            base = out[rng.integers(len(out))]
            out.append(base.upper() if rng.random() < 0.5 else base.rstrip("?!.") + " ?")
        elif kind == 1:
            base = out[rng.integers(len(out))]
            out.append(FILLERS[rng.integers(1, len(FILLERS))] + base.lower() + ENDINGS[rng.integers(len(ENDINGS))])
        else:
            topic = topics[rng.choice(len(topics), p=weights)]
            things, templates = TOPICS[topic]
            text = templates[rng.integers(len(templates))].format(x=things[rng.integers(len(things))])
            # most queries differ in a detail and who asks, as real ones do
            context = CONTEXTS[rng.integers(len(CONTEXTS))] if rng.random() < 0.85 else ""
            asker = ASKERS[rng.integers(len(ASKERS))]
            if topic == "中文问答":  # the English details would make a mixed-language query
                context, asker = "", ""
            if context:
                text = text.rstrip("?") + f", {context}" + ("?" if text.endswith("?") else "")
            if vocabulary:
                text += " (" + " ".join(vocabulary[j] for j in rng.integers(len(vocabulary), size=detail_words)) + ")"
            out.append(asker + text)
    return pd.DataFrame({"query_id": [f"q{i:06d}" for i in range(n)], "query": out})
