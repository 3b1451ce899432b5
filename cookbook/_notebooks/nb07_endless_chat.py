"""Notebook 07: hundreds of turns through a bounded RecallSession."""

from __future__ import annotations

from .cells import SETUP, code, md

CELLS = [
    md("""
# 7. An endless chat: a bounded KV cache, and what leaves it is recalled

A chatbot backend talks with a user for hours. Without sessions every reply prefills the
whole conversation again, so each turn costs more than the last (and a long enough
conversation no longer fits the model's context window at all). A `RecallSession` keeps the conversation's KV cache
between turns and prefills only the new message; with `max_cache_tokens` the cache stays
bounded: the system message stays (the attention sinks), the oldest exchanges are evicted
and written to the user's long-term memory, where `<recall>` finds them again.

Here: a user states a fact at turn 3, chats about other things for hundreds of turns, then
asks about it. We plot the cache size and the time per turn against the turn number, with
and without a session. With the settings below (300 turns, a 512-token bound) the notebook
takes about 15 minutes on 2 CPU cores. (The test suite runs it with fewer turns and a smaller
bound: `RECALL_COOKBOOK_TURNS=14 RECALL_COOKBOOK_CACHE=192`, a few minutes.)
"""),
    code(SETUP),
    code("""
import random
import time

from recall_core import RecallConfig, RecallGenerator, RecallSession, load_model
from recall_core.memory import MemoryStore, MemoryWriter

TURNS = int(os.environ.get("RECALL_COOKBOOK_TURNS", "300"))  # the question comes at the last turn
CACHE = int(os.environ.get("RECALL_COOKBOOK_CACHE", "512"))  # max_cache_tokens: a few dozen turns
FACT = "By the way, my sister Ana lives in Porto."
QUESTION = "Where does my sister Ana live?"
SAMPLE = min(20, max(1, TURNS // 2))  # every SAMPLE turns, the same reply without a session too

store = MemoryStore.local(MEMORY_DIR)
gen = RecallGenerator(*load_model(), generation_defaults={"max_new_tokens": 12, "do_sample": False})
# One memory of at most 48 tokens per reply (what a reply may add counts against the bound),
# at the end of the user's message, where this small model reads it as context.
config = RecallConfig(max_recalls=1, max_memory_tokens=48, recall_position="user_end")
writer = MemoryWriter(store, window=False)  # each evicted turn is searched on its own words
session = RecallSession(gen, max_cache_tokens=CACHE, store=store, user_id="ada", writer=writer,
                        recall_config=config, write_roles=("user",))
print(session.config)
"""),
    md("""
## Small talk, for hundreds of turns

The user's messages are drawn from a few templates (seeded). Each reply goes through the
session; every `SAMPLE` turns (20 here) the same conversation is also answered without a session (a fresh
prefill of the whole history, what a stateless chat model does), for as long as it fits the
context window.
"""),
    code("""
rng = random.Random(0)
foods, places, things = ["soup", "a salad", "pasta", "rice"], ["the park", "the market", "the beach"], [
    "a book", "a film", "a podcast", "the weather"]
templates = ["Today I had {food} for lunch.", "I went to {place} this morning.", "I was thinking about {thing}.",
             "Tell me something nice about {thing}.", "What should I cook tonight? Maybe {food}."]


def small_talk():
    return rng.choice(templates).format(food=rng.choice(foods), place=rng.choice(places), thing=rng.choice(things))


history = [{"role": "system", "content": "You are a friendly assistant. Answer briefly."}]
session.append(history[:1])
rows = []
for turn in range(1, TURNS + 1):
    text = FACT if turn == 3 else QUESTION if turn == TURNS else small_talk()
    history.append({"role": "user", "content": text})
    start = time.perf_counter()
    result = session.reply(text, max_new_tokens=24 if turn == TURNS else 12)  # only the new message is sent
    seconds = time.perf_counter() - start
    history.append({"role": "assistant", "content": result.text})
    row = {"turn": turn, "seconds": seconds, "cache": result.session.cache_tokens,
           "evicted": session.evicted_messages, "history_tokens": len(gen.encode(history[:-1])[0])
           if turn % SAMPLE == 0 or turn == TURNS else None, "fresh_seconds": None}
    if turn % SAMPLE == 0 and row["history_tokens"] + 16 < gen.context_window:
        start = time.perf_counter()
        gen.generate(history[:-1], memory=None, max_new_tokens=12)  # no session: the whole history again
        row["fresh_seconds"] = time.perf_counter() - start
    rows.append(row)
    if turn % 50 == 0 or turn == TURNS:
        print(f"turn {turn}: cache {row['cache']} tokens, {row['evicted']} messages evicted, reply in {seconds:.2f} s")
"""),
    md("""
## The question at the last turn

Turn 3 left the cache long ago; the session wrote it to memory when it was evicted. At the
last turn `<recall>` searches the memory with the question and injects what it finds. The
trace shows what was recalled; whether a 135M-parameter model then uses it, after hundreds of
turns of small talk, is another matter (it often does not: the recent chat weighs more).
"""),
    code("""
(recall,) = result.recalls
print("question:", QUESTION)
print("candidates:", [(store.for_user("ada").get(i).text, round(score, 2)) for i, score in recall.candidates])
print("evicted by then:", session.evicted_messages, "messages; cache", result.session.cache_tokens, "tokens")
print("recalled:", recall.text if recall.injected else f"nothing ({recall.reason})")
print("answer:", result.text)
print("fact in the injected memory:", "Porto" in recall.text, "| in the answer:", "Porto" in result.text)
assert recall.injected and "Porto" in recall.text, "the fact of turn 3 was not recalled at the last turn"
"""),
    md("""
## Cache size and time per turn

With a session the cache grows until it reaches the bound, then stays flat, and so does the
time per turn. Without one, every turn prefills the whole history: the prompt grows turn
after turn and so does the time. (Grown on, it would reach the context window, the dotted
line, and then no longer fit at all; these turns stay short of it.)
"""),
    code("""
import matplotlib.pyplot as plt

turns = [r["turn"] for r in rows]
sampled = [r for r in rows if r["history_tokens"] is not None]
fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4))
left.plot(turns, [r["cache"] for r in rows], label="session: cache (tokens)")
left.plot([r["turn"] for r in sampled], [r["history_tokens"] for r in sampled], "o-",
          label="no session: prompt (tokens)")
left.axhline(gen.context_window, color="grey", linestyle=":", label="context window")
left.set_xlabel("turn"), left.set_ylabel("tokens"), left.legend()
right.plot(turns, [r["seconds"] for r in rows], label="session: reply (s)")
fresh = [r for r in rows if r["fresh_seconds"] is not None]
right.plot([r["turn"] for r in fresh], [r["fresh_seconds"] for r in fresh], "o-", label="no session: reply (s)")
right.set_xlabel("turn"), right.set_ylabel("seconds per turn"), right.legend()
fig.tight_layout()
fig.savefig(FIGURES / "07_endless_chat.png", dpi=120)
plt.show()
"""),
    code("""
store.close()
"""),
]
