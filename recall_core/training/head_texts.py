"""The texts a query head is trained on: never evaluation data.

A query head (:mod:`recall_core.models.query_head`) learns to turn the ``<recall>`` hidden state into
the encoder's embedding of the user's text, so it should see many kinds of user text, not only
the templated questions of the conversations generator:

* ``conversations``: the conversations generator on its **train** seed (never ``eval`` or
  ``dev``): every user turn (facts, updates, near misses, small talk) and every question;
* ``general``: ``general_prompts("train")`` (knowledge, tasks, chit-chat);
* ``composed``: sentences composed from word lists kept here: questions and statements about
  people (first, second and third person, past and present, when/where/what/why/how). They
  are generic dialogue, written for variety; none comes from an evaluation set;
* ``vocabulary`` (``vocabulary_n``; 0 here, 16,000 in ``recall train-head``'s recipe):
  conversational templates filled with the commonest whole words of the default encoder's
  WordPiece vocabulary (all-MiniLM-L6-v2's ``vocab.txt``, roughly in order of frequency), so
  that the head meets many more words than the lists above hold; the more of them, the closer
  the head comes to the text query on LoCoMo (BENCHMARKS.md, "The hidden query").

``head_texts(seed)`` is deterministic for its seed.
"""

from __future__ import annotations

import random
import re

from recall_core.training.conversations import SEEDS, generate
from recall_core.training.prompts import general_prompts

NAMES = (
    "Maya Liam Olivia Noah Emma Lucas Amara Diego Hannah Kenji Lena Omar Clara Mateo Aisha Felix Rosa "
    "Samuel Ivy Jonas Leila Marco Nadia Theo Elena Hugo Zara Pablo Freya Arjun"
).split()
RELATIONS = ("sister", "brother", "mother", "father", "friend", "neighbour", "boss", "partner", "son",
             "daughter", "grandmother", "cousin", "colleague", "roommate", "teacher")  # fmt: skip
PAST = (
    "go hiking", "start a new job", "move to a new city", "adopt a puppy", "visit the museum", "run a marathon",
    "take a pottery class", "go camping with the kids", "join a book club", "paint a landscape",
    "travel to Japan", "get married", "buy a new car", "finish the degree", "learn to swim", "see the concert",
    "volunteer at the shelter", "plant tomatoes", "write a poem", "go to the beach", "bake bread",
    "attend the workshop", "meet the new neighbours", "sign up for yoga", "have a birthday party",
    "lose the keys", "fix the bike", "visit grandparents", "start playing guitar", "go to the support group",
)
PAST_SIMPLE = (
    "went hiking", "started a new job", "moved to a new city", "adopted a puppy", "visited the museum",
    "ran a marathon", "took a pottery class", "went camping with the kids", "joined a book club",
    "painted a landscape", "travelled to Japan", "got married", "bought a new car", "finished the degree",
    "learned to swim", "saw the concert", "volunteered at the shelter", "planted tomatoes", "wrote a poem",
    "went to the beach", "baked bread", "attended the workshop", "met the new neighbours", "signed up for yoga",
    "had a birthday party", "lost the keys", "fixed the bike", "visited grandparents", "started playing guitar",
    "went to the support group",
)
THINGS = (
    "hobbies", "favourite books", "pets", "job", "children", "plans for the summer", "garden", "car",
    "favourite food", "music taste", "last holiday", "weekend", "family", "health", "studies", "art",
    "career goals", "home town", "favourite sport", "new project",
)
WHEN = ("last week", "yesterday", "in May", "two years ago", "last summer", "on Sunday", "this morning",
        "a few days ago", "in 2019", "last night")  # fmt: skip
FEELINGS = ("happy", "nervous", "proud", "tired", "excited", "worried", "grateful", "relieved")
QUESTION_TEMPLATES = (
    "When did {name} {past}?", "Where did {name} {past}?", "Why did {name} {past}?", "How did {name} {past}?",
    "Did {name} {past}?", "Who did {name} {past} with?", "What did {name} think after they {past_simple}?",
    "What are {name}'s {thing}?", "What does {name} like about the {thing}?", "How does {name} feel about the {thing}?",
    "When did my {rel} {past}?", "Where did I {past}?", "What did I tell you about my {thing}?",
    "Do you remember when I {past_simple}?", "What did you say about my {rel}?", "What is my {rel}'s name?",
    "How long ago did I {past}?", "What would {name} likely do next?", "Is {name} still interested in the {thing}?",
    "What did {name} and {other} talk about?", "Why was {name} {feeling}?",
)
STATEMENT_TEMPLATES = (
    "I {past_simple} {when}.", "My {rel} {past_simple} {when}.", "{name} {past_simple} {when}, it was great.",
    "I felt {feeling} after I {past_simple}.", "Guess what, I {past_simple}!", "My {rel} and I {past_simple} {when}.",
    "I've been thinking about my {thing} a lot lately.", "{name} told me about their {thing}.",
    "I'm {feeling} because my {rel} {past_simple}.", "We {past_simple} {when} and it changed everything.",
)


VOCABULARY_TEMPLATES = (
    "What did {name} say about the {w}?", "Have you ever tried {w}?", "I've been thinking about {w} and {w2} lately.",
    "When did {name} start with the {w}?", "Do you remember what I told you about {w}?", "My {rel} is really into {w}.",
    "How did {name} feel about the {w}?", "{name} mentioned {w} last week.", "Tell me about {w}.", "What is {w}?",
    "Why does {name} care so much about {w}?", "We talked about {w}, {w2} and {w3}.", "Is {w} related to {w2}?",
    "What kind of {w} does {name} like?", "I finally got my {w} yesterday!", "Where can I find a good {w}?",
    "Did {name} ever go back to the {w}?", "What happened with your {w}?", "{name} and I went to see the {w}.",
    "How long has {name} been doing {w}?", "Any advice on {w}?", "I'm worried about the {w}.",
)
MORE_NAMES = (
    "Alice Ben Chloe Daniel Ella Frank Grace Henry Isla Jack Kate Leo Mia Nathan Olive Peter Quinn Ruby Sam "
    "Tara Umar Vera Will Xena Yusuf Zoe Adam Bella Carl Dana Eric Fiona George Helen Ian Julia Kevin Laura "
    "Martin Nora Oscar Paula Rachel Steve Tina Victor Wendy Alex Beth Chris Diana Ethan Gemma Harry Irene "
    "James Karen Luke Megan Nick Owen Penny Rob Sarah Tom Uma Vince Amy Brian Cathy David Emily Fred Gina"
).split()


def vocabulary_words(limit: int = 8000) -> list[str]:
    """The first ``limit`` whole lower-case words (4 to 12 letters) of the default encoder's vocabulary."""
    from recall_core.memory.encoders import default_encoder_path

    lines = (default_encoder_path() / "vocab.txt").read_text(encoding="utf-8").splitlines()
    return [w for w in lines if re.fullmatch(r"[a-z]{4,12}", w)][:limit]


def vocabulary(seed: int, n: int = 4000) -> list[str]:
    """``n`` conversational sentences filled with :func:`vocabulary_words`, deterministic for ``seed``."""
    rng = random.Random(seed)
    words, names = vocabulary_words(), NAMES + MORE_NAMES
    out = []
    for _ in range(n):
        w, w2, w3 = rng.sample(words, 3)
        text = rng.choice(VOCABULARY_TEMPLATES).format(name=rng.choice(names), rel=rng.choice(RELATIONS), w=w, w2=w2, w3=w3)
        out.append(text)
    return out


def composed(seed: int, n: int = 3000) -> list[str]:
    """``n`` questions and statements composed from the word lists above, deterministic for ``seed``."""
    rng = random.Random(seed)
    out: list[str] = []
    while len(out) < n:
        i = rng.randrange(len(PAST))
        name, other = rng.sample(NAMES, 2)
        fields = {"name": name, "other": other, "past": PAST[i], "past_simple": PAST_SIMPLE[i],
                  "thing": rng.choice(THINGS), "rel": rng.choice(RELATIONS), "when": rng.choice(WHEN),
                  "feeling": rng.choice(FEELINGS)}  # fmt: skip
        templates = QUESTION_TEMPLATES if rng.random() < 0.6 else STATEMENT_TEMPLATES
        text = rng.choice(templates).format(**fields)
        out.append(text[0].upper() + text[1:])
    return out


def head_texts(seed: int = 0, users: int = 40, composed_n: int = 3000, vocabulary_n: int = 0) -> tuple[list[str], dict[str, int]]:
    """The training texts of a query head (unique, shuffled by ``seed``) and how many came from each source."""
    people = generate(SEEDS["train"], users=users)
    sources = {
        "conversations": [t.content for u in people for t in u.turns if t.role == "user"]
        + [q.text for u in people for q in u.questions],
        "general": general_prompts("train"),
        "composed": composed(seed, composed_n),
    }
    if vocabulary_n:
        sources["vocabulary"] = vocabulary(seed, vocabulary_n)
    seen: dict[str, None] = {}
    counts = {}
    for name, texts in sources.items():
        before = len(seen)
        seen.update(dict.fromkeys(t for t in texts if t.strip()))
        counts[name] = len(seen) - before
    texts = list(seen)
    random.Random(seed).shuffle(texts)
    return texts, counts
