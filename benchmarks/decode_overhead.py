"""Decode overhead of the recall loop, and the cost of one recall.

1. tokens/s of ``generate(custom_generate=recall_generate)`` with no ``<recall>`` versus plain
   ``model.generate()``: same model, same prompt, runs alternating in one process so machine
   noise hits both alike. Prints the ratio of medians (goal: >= 0.98).
2. The cost of one recall: a real memory store (Chroma, MiniLM encoder) holding N memories,
   a prompt ending in ``<recall>``; time of retrieval (encode + search) and of the injection
   forward pass of a ~30-token memory, and the end-to-end extra latency versus the same
   generation without the recall.

Usage: python -m benchmarks.decode_overhead [--model NAME] [--rounds 10] [--new-tokens 64]
Writes benchmarks/out/decode_overhead.json and .png.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

import torch

from benchmarks.common.args import OUT
from benchmarks.common.plotting import pyplot, save
from benchmarks.common.results import write_results
from benchmarks.common.timing import timed
from recall_core import RECALL_TOKEN, RecallConfig, load_model, recall_generate
from recall_core.decoding.hf_compat import cache_kwarg, cache_of
from recall_core.decoding.notes import memory_embeddings

PROMPT = [{"role": "user", "content": "Write a short story about a lighthouse keeper and a storm."}]
MEMORY_30_TOKENS = (
    "On 12 May 2023 the user adopted a brown beagle called Zorblax from the Lisbon shelter, "
    "and walks him every morning at seven."
)


def decode_ratio(model, tokenizer, rounds: int, new_tokens: int) -> dict:
    ids = torch.tensor([tokenizer.apply_chat_template(PROMPT, add_generation_prompt=True, return_dict=False)])
    ids = ids.to(model.device)
    # min_new_tokens on both sides: every run decodes exactly new_tokens tokens.
    kwargs = {"max_new_tokens": new_tokens, "min_new_tokens": new_tokens, "do_sample": False}
    plain = lambda: model.generate(ids, **kwargs)  # noqa: E731
    recall = lambda: model.generate(ids, custom_generate=recall_generate, recall_tokenizer=tokenizer, **kwargs)  # noqa: E731
    assert torch.equal(plain(), recall()), "parity broken: recall loop differs from generate()"
    plain_tps, recall_tps, plain_cpu, recall_cpu = [], [], [], []
    for i in range(rounds):
        # alternate which goes first, so warm-up and drift do not favour one side
        order = [(plain, plain_tps, plain_cpu), (recall, recall_tps, recall_cpu)]
        for fn, wall_sink, cpu_sink in order if i % 2 == 0 else order[::-1]:
            clock = timed(fn)  # CPU time too: it is less hurt by other load
            wall_sink.append(new_tokens / clock.wall)
            cpu_sink.append(new_tokens / clock.cpu)
    return {
        "prompt_tokens": ids.shape[1],
        "new_tokens": new_tokens,
        "rounds": rounds,
        "plain_tokens_per_s": plain_tps,
        "recall_tokens_per_s": recall_tps,
        "plain_median": statistics.median(plain_tps),
        "recall_median": statistics.median(recall_tps),
        "ratio": statistics.median(recall_tps) / statistics.median(plain_tps),
        "plain_tokens_per_cpu_s": plain_cpu,
        "recall_tokens_per_cpu_s": recall_cpu,
        "cpu_ratio": statistics.median(recall_cpu) / statistics.median(plain_cpu),
    }


@torch.no_grad()
def recall_cost(model, tokenizer, memories: int, repeats: int) -> dict:
    from recall_core.memory import MemoryStore, MemoryWriter

    config = RecallConfig()
    with tempfile.TemporaryDirectory() as tmp:
        store = MemoryStore.local(Path(tmp) / "store")
        writer = MemoryWriter(store)
        user = "bench-user"
        filler = [f"Note {i}: the user mentioned item number {i} while talking about the weather." for i in range(memories)]
        writer.add_turns([{"user_id": user, "role": "user", "content": text} for text in [*filler, MEMORY_30_TOKENS]])
        memory = store.for_user(user)
        question = [{"role": "user", "content": "What is my dog called?" + RECALL_TOKEN}]
        ids = torch.tensor([tokenizer.apply_chat_template(question, add_generation_prompt=True, return_dict=False)])
        from recall_core.types import RecallQuery

        query = RecallQuery(text="What is my dog called?")
        memory.search(query, config.top_k)  # warm the encoder
        search_ms = [1000 * timed(lambda: memory.search(query, config.top_k)).wall for _ in range(repeats)]
        hit = memory.search(query, 1)[0]
        embeds = memory_embeddings(model, tokenizer, hit.text, config)
        prefix = model(ids[:, :-1], use_cache=True)

        def inject():
            cache = _copy_cache(cache_of(prefix))
            model(inputs_embeds=embeds, use_cache=True, **cache_kwarg(cache))

        inject_ms = [1000 * timed(inject).wall for _ in range(repeats)]
        kwargs = {"max_new_tokens": 16, "min_new_tokens": 16, "do_sample": False}
        with_recall, without = [], []
        for _ in range(repeats):
            trace: list = []

            def recall_once(trace: list = trace) -> None:
                model.generate(ids, custom_generate=recall_generate, memory=memory, recall_config=config,
                               recall_tokenizer=tokenizer, recall_trace=trace, **kwargs)

            with_recall.append(1000 * timed(recall_once).wall)
            assert trace and trace[0].injected, f"the recall injected nothing: {trace}"
            without.append(1000 * timed(lambda: model.generate(
                ids, custom_generate=recall_generate, memory=None, recall_tokenizer=tokenizer, **kwargs)).wall)
        store.close()
    return {
        "memories": memories + 1,
        "injected_tokens": int(embeds.shape[1]),
        "retrieval_ms_median": statistics.median(search_ms),
        "injection_forward_ms_median": statistics.median(inject_ms),
        "generate_with_recall_ms_median": statistics.median(with_recall),
        "generate_without_recall_ms_median": statistics.median(without),
        "extra_ms_per_recall": statistics.median(with_recall) - statistics.median(without),
        "recalled_memory": hit.text,
    }


def _copy_cache(cache):
    import copy

    return copy.deepcopy(cache)


def plot(result: dict, path: Path) -> None:
    plt = pyplot()
    decode = result["decode"]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    left.boxplot([decode["plain_tokens_per_s"], decode["recall_tokens_per_s"]])
    left.set_xticks([1, 2], ["generate()", "recall_generate\n(no recall)"])
    left.set_ylabel("tokens / s")
    left.set_title(f"decode speed, ratio {decode['ratio']:.3f}")
    cost = result.get("recall_cost")
    if cost:
        parts = ["retrieval_ms_median", "injection_forward_ms_median", "extra_ms_per_recall"]
        right.bar(["retrieval\n(encode+search)", f"injection\n({cost['injected_tokens']} tokens)", "end-to-end\nextra"],
                  [cost[p] for p in parts], color=["tab:blue", "tab:orange", "tab:gray"])
        right.set_ylabel("ms")
        right.set_title(f"cost of one recall ({cost['memories']} memories)")
    save(fig, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=None, help="HF model id or path (default: embedded SmolLM2-135M)")
    parser.add_argument("--device", default=None)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--new-tokens", type=int, default=64)
    parser.add_argument("--memories", type=int, default=1000, help="memories in the store for the recall cost")
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--skip-recall-cost", action="store_true")
    args = parser.parse_args(argv)

    torch.manual_seed(0)
    model, tokenizer = load_model(args.model, device=args.device)
    result = {"model": args.model or "SmolLM2-135M-Instruct (embedded)", "device": str(model.device),
              "threads": torch.get_num_threads()}
    result["decode"] = decode_ratio(model, tokenizer, args.rounds, args.new_tokens)
    d = result["decode"]
    print(f"generate():        {d['plain_median']:.1f} tokens/s (median of {d['rounds']})")
    print(f"recall_generate(): {d['recall_median']:.1f} tokens/s (no recall)")
    print(f"ratio:             {d['ratio']:.3f}   (goal >= 0.98; wall clock)")
    print(f"cpu-time ratio:    {d['cpu_ratio']:.3f}   (tokens per CPU-second, less hurt by other load)")
    if not args.skip_recall_cost:
        result["recall_cost"] = c = recall_cost(model, tokenizer, args.memories, args.repeats)
        print(f"one recall, {c['memories']} memories: retrieval {c['retrieval_ms_median']:.1f} ms, "
              f"injection of {c['injected_tokens']} tokens {c['injection_forward_ms_median']:.1f} ms, "
              f"end-to-end extra {c['extra_ms_per_recall']:.1f} ms")
    write_results(OUT, "decode_overhead", result, plot=plot, indent=2)
    print(f"wrote {OUT / 'decode_overhead.json'} and .png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
