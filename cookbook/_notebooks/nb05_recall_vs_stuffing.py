"""Notebook 05: recall vs memories stuffed into the prompt."""

from __future__ import annotations

from .cells import SETUP, code, md

CELLS = [
    md("""
# 5. Recall vs prompt stuffing, on the same questions

Three ways to give the model what it knows about the user, measured on the same questions:

* **recall**: nothing in the prompt; at `<recall>` the loop injects the best memory into the
  KV cache;
* **stuffing**: every memory pasted into the system prompt (what a chat history buffer or a
  "user profile" prompt does);
* **top-1 in prompt**: the same retrieved memory recall would inject, pasted into the prompt
  instead (classic RAG). This isolates *where* the memory goes from *which* memory it is.

We report each answer, whether it contains the expected word, the prompt tokens, the tokens
injected, the time to the first token (prompt, search and injection included) and the time
per generated token. Timings on a shared CPU are noisy: compare within one run. The model is small (135M parameters): read the numbers as a
measurement, not a promise. (The test suite runs this notebook on the first two questions:
`RECALL_COOKBOOK_QUESTIONS=2`.)
"""),
    code(SETUP),
    code("""
import time

from recall_core import RecallGenerator
from recall_core.memory import MemoryStore, MemoryWriter
from recall_core.types import RecallQuery

facts = [
    "My dog is called Biscuit.",
    "I live in Lisbon.",
    "My sister Ana lives in Porto.",
    "I am allergic to peanuts.",
    "I work as a nurse at the city hospital.",
    "My favourite colour is green.",
    "I drive a red Fiat Panda.",
    "I play the cello in an amateur orchestra.",
    "My best friend is called Marta.",
    "I was born in 1990.",
]
questions = [
    ("What is my dog called?", "biscuit"),
    ("Where does my sister live?", "porto"),
    ("What am I allergic to?", "peanut"),
    ("Which instrument do I play?", "cello"),
    ("What is my best friend called?", "marta"),
][: int(os.environ.get("RECALL_COOKBOOK_QUESTIONS", "5"))]
store = MemoryStore.local(MEMORY_DIR)
writer = MemoryWriter(store)
for fact in facts:
    writer.add_turn("ada", "user", fact)
memory = store.for_user("ada")
gen = RecallGenerator.from_pretrained()
SYSTEM = "You are a helpful assistant."
"""),
    code("""
def run(method, question):
    if method == "recall":
        messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": question}]
        kwargs = {"memory": memory}
    elif method == "stuffing":
        profile = " ".join(facts)
        messages = [{"role": "system", "content": f"{SYSTEM} What you know about the user: {profile}"},
                    {"role": "user", "content": question}]
        kwargs = {"memory": None}
    else:  # top-1 in prompt
        best = memory.search(RecallQuery(question), k=1)[0].text
        messages = [{"role": "system", "content": f"{SYSTEM} What you know about the user: {best}"},
                    {"role": "user", "content": question}]
        kwargs = {"memory": None}
    config = gen.config.replace(recall_policy="auto" if method == "recall" else "explicit")
    start = time.perf_counter()
    gen.generate(messages, config=config, max_new_tokens=1, **kwargs)  # prompt (+ recall) + one token
    first = time.perf_counter() - start
    start = time.perf_counter()
    result = gen.generate(messages, config=config, max_new_tokens=24, **kwargs)
    return result, first, time.perf_counter() - start


rows = []
methods = ["recall", "stuffing", "top-1 in prompt"]
for question, expected in questions:
    for method in methods:
        result, first, seconds = run(method, question)
        rows.append({
            "question": question, "method": method, "answer": result.text.strip(),
            "correct": expected in result.text.lower(), "prompt": result.usage.prompt_tokens,
            "injected": result.usage.injected_tokens, "generated": result.usage.generated_tokens,
            "first": first, "seconds": seconds,
        })
for row in rows:
    mark = "yes" if row["correct"] else "no "
    print(f"{row['method']:>16} | {mark} | {row['prompt']:4d} + {row['injected']:3d} tok | "
          f"first token {row['first']:4.2f} s | {row['generated']:2d} tok in {row['seconds']:5.2f} s | "
          f"{row['question']} -> {row['answer'][:60]!r}")
"""),
    md("""
## Summary

Prompt tokens grow with everything stuffed into the prompt (all memories, every call);
recall's prompt stays the size of the conversation, and only the chosen memory's tokens are
read, once, as injected embeddings. Recall's first token also pays for the search (one
sentence-encoder call, about 10 ms) and one extra forward pass over the memory.
"""),
    code("""
import matplotlib.pyplot as plt

summary = {}
for method in methods:
    mine = [row for row in rows if row["method"] == method]
    summary[method] = {
        "correct": sum(row["correct"] for row in mine),
        "prompt tokens": sum(row["prompt"] for row in mine) / len(mine),
        "injected tokens": sum(row["injected"] for row in mine) / len(mine),
        "first token (s)": sum(row["first"] for row in mine) / len(mine),
        "ms per token": 1000 * sum(row["seconds"] for row in mine) / sum(max(1, row["generated"]) for row in mine),
    }
print(f"{'method':>16} | correct | prompt tok | injected tok | first token (s) | ms per token")
for method, s in summary.items():
    print(f"{method:>16} | {s['correct']}/{len(questions)}     | {s['prompt tokens']:10.1f} | "
          f"{s['injected tokens']:12.1f} | {s['first token (s)']:15.2f} | {s['ms per token']:.0f}")

fig, axes = plt.subplots(1, 4, figsize=(14, 3.2))
for ax, key in zip(axes, ["correct", "prompt tokens", "first token (s)", "ms per token"]):
    ax.bar(methods, [summary[m][key] for m in methods], color=["#e4572e", "#4c72b0", "#55a868"])
    ax.set_title(key if key != "correct" else f"correct (of {len(questions)})")
    ax.tick_params(axis="x", labelrotation=15)
fig.tight_layout()
fig.savefig(FIGURES / "05_recall_vs_stuffing.png", dpi=120)
plt.show()
"""),
    code("""
store.close()
"""),
]
