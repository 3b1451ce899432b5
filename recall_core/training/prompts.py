"""Generic prompts that need no personal memory: general knowledge, tasks, chit-chat.

They are the negative side of recall training (the model should answer them without
``<recall>``) and the held-out set on which the tuned model's replies are compared with the
base model's. Some of them use the words of personal questions ("a good name for a dog",
"the capital of Portugal") so that "my" and "you told me", not the topic, is what a tuned
model learns to recall on.

``general_prompts("train")`` and ``general_prompts("heldout")`` never share a prompt, a
topic, or a template: held-out prompts are made of topics and templates kept out of training.

:func:`statement_prompts` are things a user tells the assistant about themselves ("I adopted a
cat yesterday."). They need no memory either: the reply acknowledges them, as the base model
does, rather than searching for an answer nobody asked for. Split the same way.
"""

from __future__ import annotations

import random
from typing import Literal

Split = Literal["train", "heldout"]

TOPICS = (
    "photosynthesis", "black holes", "the French Revolution", "volcanoes", "the water cycle", "gravity",
    "the Roman Empire", "vaccines", "climate change", "the internet", "electricity", "the Moon landing",
    "DNA", "rainbows", "earthquakes", "the printing press", "honeybees", "the Great Wall of China",
    "tides", "the human heart", "plate tectonics", "the Renaissance", "solar panels", "coral reefs",
    "the stock market", "jazz music", "the Olympic Games", "glaciers", "penguins", "the periodic table",
    "compound interest", "the Silk Road", "bread baking", "chess", "the immune system", "lightning",
    "the Amazon rainforest", "recycling", "origami", "the speed of light", "dinosaurs", "coffee",
    "the Eiffel Tower", "sleep", "meditation", "tea ceremonies", "wind turbines", "the Sahara desert",
    "octopuses", "the piano", "Mount Everest", "the metric system", "comets", "cheese making",
)
KNOWLEDGE = (
    "What is {t}?", "Explain {t} in simple terms.", "Give me a fun fact about {t}.", "Why is {t} important?",
    "Tell me briefly about {t}.", "What should everyone know about {t}?", "Can you describe {t} in two sentences?",
    "How would you explain {t} to a child?",
)
TASK_SUBJECTS = (
    "autumn", "the sea", "a rainy morning", "a cat", "mountains", "friendship", "a city at night", "spring",
    "the stars", "a lighthouse", "a train journey", "winter", "a garden", "the desert", "coffee", "the moon",
)
TASKS = (
    "Write a short poem about {s}.", "Write a haiku about {s}.", "Give me three words that describe {s}.",
    "Write one sentence about {s}.", "Describe {s} in a few words.", "Tell me a short story about {s}.",
)
#: General questions in the words of personal ones: answered from knowledge, not memory.
NEAR_MISS = (
    "What is a good name for a dog?", "What is a popular name for a cat?", "What is the capital of Portugal?",
    "Which city is the capital of Norway?", "What jobs suit someone who likes the outdoors?",
    "What does a pharmacist do?", "When is Christmas?", "When do people celebrate New Year?",
    "What car is good for a big family?", "What is a healthy food for breakfast?",
    "Which instrument is easiest to learn?", "What are common food allergies?", "What is a good first band to see live?",
    "Where did jazz music grow up?", "What hobbies are good for relaxing?", "Which language is hardest to learn?",
    "What is a classic book everyone should read?", "What is a good name for a baby boy?",
    "What colour is the sky on a clear day?", "How do people celebrate a wedding anniversary?",
    "What does a lighthouse keeper do?", "What does a beekeeper do all day?", "Which city has the most bridges?",
    "What is a good gift for a sister's birthday?", "What does a translator need to know?",
    "What is the most popular dog breed?", "What instrument does a cellist play?", "Where is Porto?",
    "What is ramen made of?", "Is it hard to learn Finnish?", "What is Dune about?", "What is salsa dancing?",
)
CHIT_CHAT = (
    "Hello!", "How are you today?", "Tell me a joke.", "Good morning!", "What can you do?", "Thanks for your help!",
    "Can you help me with something?", "I'm bored.", "Say something nice.", "What's your favourite season?",
    "Do you like music?", "Let's chat for a bit.", "I had a long day.", "What should I cook tonight?",
    "Give me a motivational quote.", "What is the meaning of life?", "Any tips for a productive morning?",
    "How do I make a good cup of tea?", "Recommend a board game.", "What's a fun weekend activity?",
    "How can I stay focused while studying?", "What is a good way to relax?", "Teach me a new word.",
    "How many days are in a leap year?", "What is 12 times 12?", "Spell the word 'necessary'.",
)


#: What a user tells the assistant about their life: ``{n}`` a first name, ``{p}`` a place,
#: ``{j}`` a job, ``{a}`` an animal, ``{h}`` a pastime, ``{r}`` a relative.
STATEMENT_TEMPLATES = (
    "My {r} is called {n}.", "I just started a new job as a {j}.", "We moved to {p} last month.",
    "I adopted a {a} last weekend.", "I've been getting into {h} lately.", "My {r} {n} is visiting us next week.",
    "I'm thinking of becoming a {j}.", "I spent the whole weekend on {h}.", "I grew up in {p}.",
    "Our {a} is called {n}.", "My {r} works as a {j}.", "I'm flying to {p} on Friday.",
    "I finally tried {h} for the first time today.", "I met {n} for coffee this morning.",
    "My {r} just got a {a}.", "I used to live in {p} when I was a kid.", "I quit my job as a {j} yesterday.",
    "{n} and I have been friends since school.", "We named the {a} {n}.", "I'm taking {h} classes on Tuesdays.",
    "My {r} moved to {p} for work.", "I passed my exam today!", "Work was really stressful this week.",
    "I've decided to run a marathon next spring.", "We're painting the living room this weekend.",
    "I'm allergic to {a}s, sadly.", "My {r} and I went to {p} for the holidays.",
)
STATEMENT_VALUES = {
    "n": ("Maya", "Tomas", "Priya", "Oskar", "Leila", "Jonah", "Ines", "Kenji", "Rosa", "Felix", "Amara", "Dmitri"),
    "p": ("Lisbon", "Toronto", "Osaka", "Nairobi", "Glasgow", "Lima", "Krakow", "Melbourne", "Austin", "Ghent"),
    "j": ("nurse", "carpenter", "data analyst", "teacher", "chef", "librarian", "pilot", "plumber", "designer"),
    "a": ("cat", "dog", "rabbit", "parrot", "hamster", "tortoise", "puppy", "kitten", "goldfish"),
    "h": ("pottery", "rock climbing", "knitting", "chess", "gardening", "salsa dancing", "birdwatching", "baking"),
    "r": ("sister", "brother", "cousin", "neighbour", "uncle", "aunt", "partner", "grandmother", "son", "daughter"),
}


def statement_prompts(split: Split = "train", n: int | None = None, seed: int = 0) -> list[str]:
    """Things a user says about themselves, shuffled by ``seed``; at most ``n`` (``None``: all).

    Templates and each kind of value are divided as :func:`general_prompts` divides its lists
    (every third one held out), so the two splits share no statement, template or value.
    """
    _check(split, n)
    held = split == "heldout"
    values = {k: [v for i, v in enumerate(vs) if (i % 3 == 2) == held] for k, vs in STATEMENT_VALUES.items()}
    rng = random.Random(f"statements-{seed}")
    prompts: set[str] = set()
    for i, template in enumerate(STATEMENT_TEMPLATES):
        if (i % 3 == 2) != held:
            continue
        for _ in range(8):  # a few fillings of each template
            prompts.add(template.format(**{k: rng.choice(vs) for k, vs in values.items()}))
    ordered = sorted(prompts)
    random.Random(seed).shuffle(ordered)
    return ordered if n is None else ordered[:n]


def general_prompts(split: Split = "train", n: int | None = None, seed: int = 0) -> list[str]:
    """Prompts that need no memory, shuffled by ``seed``; at most ``n`` (``None``: all of the split).

    Topics, task subjects and templates are each divided in a fixed way (every third one is
    held out), and the fixed lists of near misses and chit-chat likewise, so the two splits
    share no prompt and no topic.
    """
    _check(split, n)
    held = split == "heldout"

    def part(items: tuple[str, ...]) -> list[str]:
        return [item for i, item in enumerate(items) if (i % 3 == 2) == held]

    prompts = [t.format(t=topic) for t in part(KNOWLEDGE) for topic in part(TOPICS)]
    prompts += [t.format(s=subject) for t in part(TASKS) for subject in part(TASK_SUBJECTS)]
    prompts += part(NEAR_MISS) + part(CHIT_CHAT)
    prompts = sorted(set(prompts))
    random.Random(seed).shuffle(prompts)
    return prompts if n is None else prompts[:n]


def _check(split: str, n: int | None) -> None:
    """The arguments :func:`general_prompts` and :func:`statement_prompts` share, checked alike."""
    if split not in ("train", "heldout"):
        raise ValueError(f"split must be 'train' or 'heldout', got {split!r}")
    if n is not None and (not isinstance(n, int) or n < 0):
        raise ValueError(f"n must be None or an int >= 0, got {n!r}")
