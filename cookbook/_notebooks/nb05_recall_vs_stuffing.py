"""Notebook 05: recall vs memories stuffed into the prompt."""

from __future__ import annotations

from .cells import SETUP, code, md

CELLS = [
    md("""
# 5. Recall vs prompt stuffing, on the same questions

Four ways to give the model what it knows about the user, measured on the same questions:

* **recall**: nothing in the prompt; at `<recall>` (under the default policy, at the end of
  the system message) the loop searches the memory and injects its block of notes into the
  KV cache: a short reading instruction and the best memories (up to two by default), each
  dated and tagged with who said it;
* **stuffing**: every memory pasted into the system prompt (what a chat history buffer or a
  "user profile" prompt does);
* **block in prompt**: the very notes recall injected for the question (read from its trace),
  rendered into the same block by the generator's `config.block_text` and pasted as text at
  the end of the system message, where recall injects them, with recall off. Same notes, same
  format, same place: this isolates *where* the block goes (injected at `<recall>`, or in the
  prompt);
* **top-1 text in prompt**: only the best memory's bare text, pasted into the system prompt
  (a plain retrieval-augmented prompt). Against the block in the prompt, it shows what the
  block's *format* is worth.

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
    elif method == "block in prompt":  # recall's own block, as text, where recall injects it
        block = gen.config.block_text(injected[question])
        messages = [{"role": "system", "content": f"{SYSTEM}\\n\\n{block}"}, {"role": "user", "content": question}]
        kwargs = {"memory": None}
    else:  # top-1 text in prompt
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
    seconds = time.perf_counter() - start
    if method == "recall":  # the notes it injected, one per line: the next arm pastes them
        injected[question] = "\\n".join(r.text for r in result.recalls if r.injected)
    return result, first, seconds


rows = []
injected = {}
methods = ["recall", "stuffing", "block in prompt", "top-1 text in prompt"]  # recall first: its notes are reused
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
    print(f"{row['method']:>20} | {mark} | {row['prompt']:4d} + {row['injected']:3d} tok | "
          f"first token {row['first']:4.2f} s | {row['generated']:2d} tok in {row['seconds']:5.2f} s | "
          f"{row['question']} -> {row['answer'][:60]!r}")
"""),
    md("""
## Summary

Prompt tokens grow with everything stuffed into the prompt (all memories, every call);
recall's prompt stays the size of the conversation, and the chosen notes are read as
injected embeddings. Recall's first token also pays for the search (one sentence-encoder
call, about 10 ms) and one extra forward pass over the block.

What the block-in-prompt arm shows: in the default `inject_mode="tokens"` the injected
embeddings are the block's own token embeddings, so pasting the same block at the same place
gives the model nearly the same input. On the shipped default (checked 2026-12-07, all five
questions) its answers were recall's, word for word, while the bare top-1 text answered 2 of
5. So the difference from a plain retrieval prompt here is the block's format (the
instruction, the dates, the speakers, two notes) and the weights, tuned to read that block,
not the injection into the KV cache. The benchmarks say the same: on the hand-written
conversation families, recall's engine on the plain weights roughly ties LangChain's
retrieval recipe, and the recipe given recall's tuned weights answers 141 of 482 facts to
recall's 165 (1.17x): most of recall's lead comes from the tuning
([docs/benchmarks/heldout.md](../docs/benchmarks/heldout.md#the-recipe-on-recalls-tuned-weights-how-much-of-the-lead-is-the-engines-2026-12-07-sixty-sixth-session)).
What injection itself buys is where and when the notes are chosen: at the marker, inside
generation, with the prompt left as the caller wrote it.
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
print(f"{'method':>20} | correct | prompt tok | injected tok | first token (s) | ms per token")
for method, s in summary.items():
    print(f"{method:>20} | {s['correct']}/{len(questions)}     | {s['prompt tokens']:10.1f} | "
          f"{s['injected tokens']:12.1f} | {s['first token (s)']:15.2f} | {s['ms per token']:.0f}")

fig, axes = plt.subplots(1, 4, figsize=(15, 3.6))
for ax, key in zip(axes, ["correct", "prompt tokens", "first token (s)", "ms per token"]):
    ax.bar(methods, [summary[m][key] for m in methods], color=["#e4572e", "#4c72b0", "#55a868", "#8172b2"])
    ax.set_title(key if key != "correct" else f"correct (of {len(questions)})")
    ax.tick_params(axis="x", labelrotation=25)
fig.tight_layout()
fig.savefig(FIGURES / "05_recall_vs_stuffing.png", dpi=120)
plt.show()
"""),
    code("""
store.close()
"""),
]
