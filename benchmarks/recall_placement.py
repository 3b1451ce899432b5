"""Where to put ``<recall>`` in a chat turn, and how to wrap the injected memory.

Made-up personal facts the model cannot know; for each, the question is asked with the
fact's memory injected under each configuration, and we count answers that contain the
fact's keyword. Also: no memory at all (the floor).

Usage: python -m benchmarks.recall_placement [--model NAME] [--max-new-tokens 40]
Writes benchmarks/out/recall_placement.json and .png.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from benchmarks.common.args import OUT
from benchmarks.common.plotting import pyplot, save
from benchmarks.common.results import write_results
from recall_core import RecallConfig, RecallGenerator
from recall_core.types import MemoryCandidate, RecallQuery

# (question, memory text, keyword that must appear in the answer)
FACTS = [
    ("What is the name of my dog?", "Hi! I just adopted a beagle puppy. I named him Zorblax.", "zorblax"),
    ("Where do I work?", "I work as a lighthouse keeper on the island of Berlenga.", "lighthouse"),
    ("When is my sister's birthday?", "My sister Ana's birthday is on the 14th of March.", "march"),
    ("What city do I live in?", "I moved to Trondheim last year for my new job.", "trondheim"),
    ("What is my favourite food?", "My absolute favourite food is pierogi with mushrooms.", "pierogi"),
    ("What instrument do I play?", "I have been playing the bassoon since I was twelve.", "bassoon"),
    ("What is my cat called?", "My cat is called Mr. Whiskerbottom.", "whiskerbottom"),
    ("Who is my best friend?", "My best friend is a woman named Olufunmi.", "olufunmi"),
    ("What car do I drive?", "I drive an old green Lada Niva from 1987.", "lada"),
    ("What is my daughter's name?", "My daughter Ingrid turned six last week.", "ingrid"),
    ("Which language am I learning?", "I started learning Icelandic on Tuesdays and Thursdays.", "icelandic"),
    ("What is my allergy?", "I am allergic to kiwi fruit, it makes my throat itch.", "kiwi"),
]

CONFIGS = {
    "no memory": None,
    "user_end: ' (I remember: {text}) '": RecallConfig(recall_position="user_end", template=" (I remember: {text}) "),
    "user_end: ' (Context: {text})'": RecallConfig(recall_position="user_end", template=" (Context: {text})"),
    "user_end: '\\nFor context, I said before: {text}\\n'": RecallConfig(
        recall_position="user_end", template="\nFor context, I said before: {text}\n"),
    "assistant_start: '{text}\\n\\n'": RecallConfig(template="{text}\n\n"),
    "assistant_start: 'Memory: {text}\\n\\n' (default)": RecallConfig(),
    "assistant_start: 'You told me: \"{text}\"\\n\\n'": RecallConfig(template='You told me: "{text}"\n\n'),
}


class OneFact:
    """A memory that holds a single fact (retrieval is not what is measured here)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def search(self, query: RecallQuery, k: int) -> list[MemoryCandidate]:
        return [MemoryCandidate(id="fact", score=1.0, text=self.text)]


def run(gen: RecallGenerator, max_new_tokens: int) -> dict:
    results = {}
    for name, config in CONFIGS.items():
        hits, answers, started = 0, [], time.perf_counter()
        for question, fact, keyword in FACTS:
            memory = None if config is None else OneFact(fact)
            result = gen.generate([{"role": "user", "content": question}], memory=memory,
                                  config=config or RecallConfig(), max_new_tokens=max_new_tokens)
            hit = keyword in result.text.lower()
            hits += hit
            answers.append({"question": question, "hit": hit, "answer": result.text})
        results[name] = {"hits": hits, "total": len(FACTS), "seconds": time.perf_counter() - started,
                         "answers": answers}
        print(f"{hits:2d}/{len(FACTS)}  {name}")
    return results


def plot(results: dict, path: Path) -> None:
    plt = pyplot()
    names = list(results)
    shares = [results[n]["hits"] / results[n]["total"] for n in names]
    fig, ax = plt.subplots(figsize=(9, 0.45 * len(names) + 1.2))
    ax.barh(names[::-1], shares[::-1], color="tab:blue")
    ax.set_xlim(0, 1)
    ax.set_xlabel("answers containing the injected fact")
    ax.set_title("Where <recall> goes, and the injection template")
    save(fig, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=None)
    parser.add_argument("--device", default=None)
    parser.add_argument("--max-new-tokens", type=int, default=40)
    args = parser.parse_args(argv)
    gen = RecallGenerator.from_pretrained(args.model, device=args.device)
    results = run(gen, args.max_new_tokens)
    write_results(OUT, "recall_placement", results, plot=plot, indent=2)
    print(f"wrote {OUT / 'recall_placement.json'} and .png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
