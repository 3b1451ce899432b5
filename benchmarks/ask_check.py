"""What ``ask_after_openers`` (or ``ask_on_refusal``: ``--option``) costs ``recall_policy="ask"`` on prompts that need no memory.

``"ask"`` runs the prompt once to decide; with ``ask_after_openers`` it also reads the reply
without memory, greedily, until its text says whether it gives up ("I don't know." after short
openers: ``recall_core.decoding.abstain.gives_up``). On a prompt the model does not ask on that
reading is pure cost. This script asks the held-out general prompts
(``recall_core.training.prompts.general_prompts("heldout")``, never trained on) of the
recall-tuned default with a small memory present, alternating ``ask_after_openers`` on and off
(the default; the other options at their defaults, ``ask_on_refusal`` on) in one process so that
machine noise hits both alike, and reports:

* the model's forward calls per prompt, on and off (the difference is the check's greedy steps);
* the median time of a whole call (``max_new_tokens`` tokens), on and off, and their ratio, with
  ``"auto"`` (the default policy, which searches and injects notes on every call) beside them;
* on how many prompts each asked for the memory.

``--option ask_on_refusal`` measures that option instead, on and off (the default since 2026-12-02:
on): the reply is read only when its first token can open a refusal or the abstention ("I",
"As", "Sorry", ...), at most ``REFUSAL_TOKENS`` ids; off, the abstention's ids are run once,
teacher-forced, when the first token is its first.

Usage: python -m benchmarks.ask_check [--option ask_after_openers|ask_on_refusal] [--prompts 64] [--new-tokens 32] [--no-progress]
Writes benchmarks/out/ask_check/ask_check.json, .md and .png (``--out`` to change the folder).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

from benchmarks.common.args import OUT as OUT_ROOT  # noqa: E402
from benchmarks.common.plotting import pyplot, save  # noqa: E402
from benchmarks.common.progress import progress  # noqa: E402
from benchmarks.common.results import machine, report, write_results  # noqa: E402
from recall_core.decoding.abstain import GIVES_UP_TOKENS, REFUSAL_TOKENS  # noqa: E402

OUT = OUT_ROOT / "ask_check"
USER = "bench-user"
#: The options measured, with the most ids each reads.
OPTIONS = {"ask_after_openers": GIVES_UP_TOKENS, "ask_on_refusal": REFUSAL_TOKENS}
#: A few turns of the user's, written here: the memory a prompt could recall from.
TURNS = [
    "My dog is called Biscuit, he's a beagle who steals socks.",
    "I moved to Porto last spring for a job at a bike shop.",
    "My sister Ines is getting married in June, I'm so nervous about the speech.",
    "I've been learning the cello for two years now.",
]


class ForwardCounter:
    """Counts the model's forward calls (a forward pre-hook)."""

    def __init__(self, model: Any) -> None:
        self.calls = 0
        self.handle = model.register_forward_pre_hook(self._count)

    def _count(self, *_: Any) -> None:
        self.calls += 1

    def take(self) -> int:
        calls, self.calls = self.calls, 0
        return calls


def measure(generator: Any, encoder: Any, prompts: list[str], new_tokens: int, show: bool,
            option: str = "ask_after_openers") -> dict[str, Any]:  # fmt: skip
    """Each prompt asked of ``generator`` with ``option`` on and off (the other options at their
    defaults but ``ask_on_score``, off), and under ``"auto"`` (a store with ``encoder``; ``None``: the default one)."""
    from recall_core import RecallConfig
    from recall_core.memory import MemoryStore, MemoryWriter

    counter = ForwardCounter(generator.model)
    # ask_on_score off on both sides: a prompt it asks on skips the option's reading, which is what
    # is timed here (the score's one search would be the same on both sides).
    ask = RecallConfig(recall_policy="ask", ask_on_score=0.0)
    configs = {"on": ask.replace(**{option: True}), "off": ask.replace(**{option: False}),
               "auto": RecallConfig(recall_policy="auto")}  # the default policy, for reference
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as folder:
        store = MemoryStore.local(Path(folder) / "store", **({} if encoder is None else {"encoder": encoder}))
        MemoryWriter(store).add_turns([{"user_id": USER, "role": "user", "content": text} for text in TURNS])
        memory = store.for_user(USER)
        options = {"max_new_tokens": new_tokens, "min_new_tokens": new_tokens, "do_sample": False}
        chat = [{"role": "user", "content": prompts[0]}]
        generator.generate(chat, memory=memory, config=configs["on"], **options)  # warm up
        counter.take()
        for i, prompt in enumerate(progress(prompts, "general prompts", show, unit="prompt")):
            chat = [{"role": "user", "content": prompt}]
            row: dict[str, Any] = {"prompt": prompt}
            # Alternate which goes first, so warm-up and drift favour neither.
            for name in ("on", "off", "auto") if i % 2 == 0 else ("auto", "off", "on"):
                start = time.perf_counter()
                result = generator.generate(chat, memory=memory, config=configs[name], **options)
                row[f"{name}_s"] = time.perf_counter() - start
                row[f"{name}_forward_calls"] = counter.take()
                row[f"{name}_asked"] = bool(result.recalls)
                row[f"{name}_reply"] = result.text
            rows.append(row)
        store.close()
    counter.handle.remove()
    return summarise(rows, new_tokens, option)


def summarise(rows: list[dict[str, Any]], new_tokens: int, option: str = "ask_after_openers") -> dict[str, Any]:
    neither = [r for r in rows if not r["on_asked"] and not r["off_asked"]]
    on_s, off_s, auto_s = (statistics.median(r[f"{name}_s"] for r in rows) for name in ("on", "off", "auto"))
    return {
        "benchmark": "ask_check",
        "option": option,
        "prompts": len(rows),
        "new_tokens": new_tokens,
        "machine": machine(),
        "asked_on": sum(r["on_asked"] for r in rows),
        "asked_off": sum(r["off_asked"] for r in rows),
        "not_asked_either": len(neither),
        "check_steps_mean": statistics.mean(r["on_forward_calls"] - r["off_forward_calls"] for r in neither) if neither else None,
        "check_steps_max": max((r["on_forward_calls"] - r["off_forward_calls"] for r in neither), default=None),
        "call_s_median_on": on_s,
        "call_s_median_off": off_s,
        "ratio": on_s / off_s,
        "call_s_median_auto": auto_s,
        "ratio_to_auto": on_s / auto_s,
        "rows": rows,
    }  # fmt: skip


def markdown(result: dict[str, Any]) -> str:
    steps = result["check_steps_mean"]
    return "\n".join([
        f"| `\"ask\"`, `{result['option']}` | asked (of {result['prompts']}) | call p50 ({result['new_tokens']} new tokens) |",
        "| --- | --- | --- |",
        f"| off | {result['asked_off']} | {result['call_s_median_off']:.3f} s |",
        f"| on | {result['asked_on']} | {result['call_s_median_on']:.3f} s |",
        f"| `\"auto\"` (the default policy: notes on every call) | - | {result['call_s_median_auto']:.3f} s |",
        "",
        f"On / off: **{result['ratio']:.3f}x**; on / `\"auto\"`: **{result['ratio_to_auto']:.3f}x**. On the {result['not_asked_either']} prompts neither asked on, the check ran "
        f"{'-' if steps is None else f'{steps:.1f}'} greedy steps on average (at most {result['check_steps_max']}).",
    ])  # fmt: skip


def plot(result: dict[str, Any], path: Path) -> None:
    plt = pyplot()
    neither = [r for r in result["rows"] if not r["on_asked"] and not r["off_asked"]]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    left.boxplot([[r[f"{name}_s"] for r in result["rows"]] for name in ("off", "on", "auto")])
    left.set_xticks([1, 2, 3], [f'"ask",\n{result["option"]} off', f'"ask",\n{result["option"]} on', '"auto"'])
    left.set_ylabel("s per call")
    left.set_title(f"whole call, {result['new_tokens']} new tokens: {result['ratio']:.3f}x")
    right.hist([r["on_forward_calls"] - r["off_forward_calls"] for r in neither], bins=range(0, OPTIONS[result["option"]] + 2),
               color="tab:orange")  # fmt: skip
    right.set_xlabel("greedy steps the check ran")
    right.set_ylabel("prompts not asked on")
    right.set_title("the check's reading of the reply")
    save(fig, path)


def main(argv: list[str] | None = None, generator: Any = None, encoder: Any = None) -> int:
    """Run the benchmark; ``generator`` (default: the recall-tuned default model) and ``encoder``
    (default: the store's) let a test run it on a tiny model."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--option", choices=sorted(OPTIONS), default="ask_after_openers", help="the option measured")
    parser.add_argument("--prompts", type=int, default=64, help="held-out general prompts to ask")
    parser.add_argument("--new-tokens", type=int, default=32, help="tokens each call writes")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)
    if args.prompts < 1 or args.new_tokens < 1:
        parser.error("--prompts and --new-tokens must be at least 1")
    from recall_core import RecallGenerator
    from recall_core.training.prompts import general_prompts

    generator = generator or RecallGenerator.from_pretrained(device="cpu")
    prompts = general_prompts("heldout", n=args.prompts, seed=0)
    result = measure(generator, encoder, prompts, args.new_tokens, not args.no_progress, args.option)
    table = markdown(result)
    write_results(args.out, "ask_check", result, table + "\n", plot)
    return report(table, args.out)


if __name__ == "__main__":
    sys.exit(main())
