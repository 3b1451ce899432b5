"""Conversational memory, side by side: recall against the RAG recipes its users would otherwise write.

Users state personal facts over four dated sessions (``recall_core.training.conversations``: small talk,
near-miss distractors, facts updated later); then each fact is asked about in a fresh session.
Every method answers with the same model (the embedded SmolLM2-135M-Instruct unless
``--model``), the same encoder (all-MiniLM-L6-v2) and the same greedy decoding:

* ``none``: no memory, the question alone;
* ``history``: the whole history in the prompt (every session's messages, then the question);
* ``langchain``: the LangChain recipe, ``ChatHuggingFace(HuggingFacePipeline)`` with a
  ``langchain-chroma`` retriever (k=4) over the exchanges (a user turn with its reply, one
  document each), the retrieved notes in the system message (LangChain's RAG prompt);
* ``llamaindex``: LlamaIndex's ``HuggingFaceLLM`` with ``Memory`` and its ``VectorMemoryBlock``
  (ChromaVectorStore, ``HuggingFaceEmbedding``, top 4): past messages flushed from the
  short-term queue into the block, which puts what it retrieves in the system message;
* ``recall``: ``ChatRecall`` over a ``MemoryStore`` with its defaults (and ``recall:NAME``
  variants given with ``--variant``); the default model is the recall-tuned one
  (``load_model()``), ``recall-untuned`` the same with the plain model (``tuned=False``).
  The peers always run the plain model.

Scores per method: facts answered (the answer names the current value), stale answers (it
names the old value of an updated fact instead), processed tokens (prompt plus injected
memory), time to first streamed text and total time, and retrieval hit@1 / hit@4 (the turn
that states the fact is inside one of the first 1 / 4 texts the method's search returned:
recall's memories as its store returns them, LangChain's documents, LlamaIndex's block).

Usage:
    python -m benchmarks.conversations                          # every method, the eval seed
    python -m benchmarks.conversations --seed dev --users 4 --methods recall,langchain
    python -m benchmarks.conversations --variant "user_end:recall_position=user_end"
Writes benchmarks/out/conversations/conversations.json, .md and .png.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

from benchmarks.common.args import OUT as OUT_ROOT  # noqa: E402
from benchmarks.common.args import parse_variant, seed_of  # noqa: E402
from benchmarks.common.plotting import pyplot, save  # noqa: E402
from benchmarks.common.progress import progress  # noqa: E402
from benchmarks.common.results import machine, write_results  # noqa: E402
from benchmarks.common.timing import timed_stream  # noqa: E402
from recall_core.training.conversations import SEEDS, Question, User, as_dict, generate, score  # noqa: E402

OUT = OUT_ROOT / "conversations"
METHODS = ("none", "history", "langchain", "llamaindex", "recall", "recall-untuned")
PEERS = ("none", "history", "langchain", "llamaindex")
#: Variant settings that belong to the store (what a search returns), not to RecallConfig.
STORE_OPTIONS = ("unit", "retrieval")
#: The retriever depth of both peers (LangChain's default k, and the same for LlamaIndex).
PEER_K = 4
#: LangChain's RAG prompt (the RAG tutorial's), with the notes from past conversations.
LANGCHAIN_SYSTEM = (
    "You are an assistant for question-answering tasks. Use the following pieces of retrieved context "
    "from past conversations with the user to answer the question. If you don't know the answer, say that "
    "you don't know. Use three sentences maximum and keep the answer concise.\n\n{context}"
)


# -- what every method returns ------------------------------------------------------------------


@dataclass
class Answer:
    """One method's answer to one question, with its cost and what it retrieved."""

    text: str
    prompt_tokens: int
    injected_tokens: int = 0
    ttft_s: float | None = None
    total_s: float = 0.0
    #: The texts the method retrieved, best first (empty for methods without retrieval).
    retrieved: list[str] = field(default_factory=list)

    @property
    def processed_tokens(self) -> int:
        return self.prompt_tokens + self.injected_tokens


def exchanges(user: User) -> list[tuple[str, str, Any]]:
    """``(user turn + reply as one text, the user turn, its session)`` for every exchange of a user."""
    out = []
    turns = user.turns
    for i, turn in enumerate(turns):
        if turn.role != "user":
            continue
        reply = turns[i + 1] if i + 1 < len(turns) and turns[i + 1].role == "assistant" else None
        text = f"user: {turn.content}" + (f"\nassistant: {reply.content}" if reply else "")
        out.append((text, turn.content, turn.session))
    return out


def history_messages(user: User) -> list[dict[str, str]]:
    return [{"role": t.role, "content": t.content} for t in user.turns]


# -- the methods --------------------------------------------------------------------------------


class Method:
    """A way of answering from past conversations: ``prepare`` once per user, then ``answer``."""

    name = "method"

    def prepare(self, users: Sequence[User]) -> None:  # noqa: B027 - most methods need nothing
        """Write what each user said into this method's memory."""

    def answer(self, question: Question) -> Answer:
        raise NotImplementedError

    def close(self) -> None:  # noqa: B027
        """Release what ``prepare`` opened."""


class PlainMethod(Method):
    """``none`` and ``history``: the engine with no memory (exactly ``model.generate()``)."""

    def __init__(self, name: str, generator: Any, options: dict[str, Any]) -> None:
        from recall_core import RecallConfig

        self.name = name
        self.generator = generator
        self.options = options
        self.users: dict[str, User] = {}
        #: The caller's messages as they are: no marker, no system message added.
        self.plain = RecallConfig(recall_policy="explicit")

    def prepare(self, users: Sequence[User]) -> None:
        self.users = {u.user_id: u for u in users}

    def answer(self, question: Question) -> Answer:
        past = history_messages(self.users[question.user_id]) if self.name == "history" else []
        messages = self.fit([*past, {"role": "user", "content": question.text}])
        stream = self.generator.stream(messages, memory=None, config=self.plain, **self.options)
        text, ttft, total = timed_stream(iter(stream))
        usage = stream.result.usage
        return Answer(text, usage.prompt_tokens, usage.injected_tokens, ttft, total)


    def fit(self, messages: list[dict[str, str]]) -> list[dict[str, str]]:
        """The most recent messages whose prompt fits the context window with room for the answer."""
        room = self.generator.context_window - self.options.get("max_new_tokens", 0)
        while len(messages) > 1:
            try:
                if self.generator.encode(messages, config=self.plain).shape[1] <= room:
                    break
            except ValueError:  # longer than the whole window
                pass
            messages = messages[2:]  # the oldest exchange goes first
        return messages


def memory_turns(users: Sequence[User]) -> list[Any]:
    """Every turn of ``users`` as the ``Turn`` a ``MemoryWriter`` takes (a session per dated session)."""
    from recall_core.memory import Turn

    return [
        Turn(user_id=u.user_id, role=t.role, content=t.content, session_id=f"session-{t.session}",
             timestamp=t.date, turn_index=t.index)
        for u in users for t in u.turns
    ]  # fmt: skip


class RecallMethod(Method):
    """``ChatRecall`` over a ``MemoryStore``: every turn written with ``MemoryWriter``, recalled at ``<recall>``."""

    def __init__(self, name: str, generator: Any, options: dict[str, Any], encoder: Any, config: Any = None,
                 store_options: dict[str, Any] | None = None) -> None:
        self.name = name
        self.generator = generator
        self.options = options
        self.encoder = encoder
        self.config = config
        self.store_options = store_options or {}
        self.folder = tempfile.TemporaryDirectory(prefix="recall-conv-")
        self.store: Any = None

    def prepare(self, users: Sequence[User]) -> None:
        from recall_core.memory import MemoryStore

        self.store = MemoryStore.local(Path(self.folder.name) / "store", encoder=self.encoder, **self.store_options)
        self.store.writer.add_turns(memory_turns(users))

    def chat(self, user_id: str) -> Any:
        from langchain_recall import ChatRecall

        return ChatRecall(
            generator=self.generator, store=self.store, user_id=user_id, write_memory=False,
            recall_config=self.config, **self.options,
        )  # fmt: skip

    def answer(self, question: Question) -> Answer:
        chat = self.chat(question.user_id)
        last: Any = None

        def pieces() -> Iterator[str]:
            nonlocal last
            for chunk in chat.stream(question.text):
                last = chunk
                yield str(chunk.content)

        text, ttft, total = timed_stream(pieces())
        usage = last.usage_metadata
        injected = int(usage["input_token_details"].get("recall_injected", 0))
        # What the memory found, as the texts it returns (its unit): the same search the loop ran.
        retrieved = [c.text for c in self.store.for_user(question.user_id).search(question.text, PEER_K)]
        return Answer(text, usage["input_tokens"] - injected, injected, ttft, total, retrieved)

    def close(self) -> None:
        if self.store is not None:
            self.store.close()
        self.folder.cleanup()


class LangChainMethod(Method):
    """The LangChain recipe: ``ChatHuggingFace(HuggingFacePipeline)`` + a ``langchain-chroma`` retriever."""

    name = "langchain"

    def __init__(self, model: Any, tokenizer: Any, encoder_path: str, max_new_tokens: int) -> None:
        import chromadb
        from langchain_huggingface import ChatHuggingFace, HuggingFaceEmbeddings, HuggingFacePipeline
        from transformers import pipeline

        pipe = pipeline(
            "text-generation", model=model, tokenizer=tokenizer, max_new_tokens=max_new_tokens,
            do_sample=False, return_full_text=False,
        )  # fmt: skip
        self.chat = ChatHuggingFace(llm=HuggingFacePipeline(pipeline=pipe, model_id=str(model.name_or_path)), tokenizer=tokenizer)
        self.tokenizer = tokenizer
        self.embeddings = HuggingFaceEmbeddings(model_name=encoder_path)
        self.client = chromadb.EphemeralClient()
        self.stores: dict[str, Any] = {}

    def prepare(self, users: Sequence[User]) -> None:
        from langchain_chroma import Chroma

        for user in users:
            store = Chroma(
                collection_name=f"lc-{len(self.stores)}", embedding_function=self.embeddings, client=self.client,
                collection_metadata={"hnsw:space": "cosine"},
            )  # fmt: skip
            texts = exchanges(user)
            store.add_texts([text for text, _, _ in texts], metadatas=[{"session": s} for _, _, s in texts])
            self.stores[user.user_id] = store

    def answer(self, question: Question) -> Answer:
        from langchain_core.messages import HumanMessage, SystemMessage

        started = time.perf_counter()
        docs = self.stores[question.user_id].as_retriever(search_kwargs={"k": PEER_K}).invoke(question.text)
        context = "\n\n".join(doc.page_content for doc in docs)
        messages = [SystemMessage(LANGCHAIN_SYSTEM.format(context=context)), HumanMessage(question.text)]
        text, ttft, total = timed_stream(str(chunk.content) for chunk in self.chat.stream(messages))
        retrieval_s = time.perf_counter() - started - total
        prompt = self.chat._to_chat_prompt(messages)
        tokens = len(self.tokenizer(prompt).input_ids)
        return Answer(text, tokens, 0, (ttft or 0.0) + retrieval_s, total + retrieval_s, [d.page_content for d in docs])


class LlamaIndexMethod(Method):
    """LlamaIndex: ``HuggingFaceLLM`` + ``Memory`` with a ``VectorMemoryBlock`` (Chroma, MiniLM)."""

    name = "llamaindex"
    #: Short-term queue of the ingesting memory: messages past this many tokens are flushed,
    #: a few at a time, into the vector block (LlamaIndex's waterfall).
    TOKEN_LIMIT = 400
    FLUSH_SIZE = 60

    def __init__(self, model: Any, tokenizer: Any, encoder_path: str, max_new_tokens: int) -> None:
        import chromadb
        from llama_index.embeddings.huggingface import HuggingFaceEmbedding
        from llama_index.llms.huggingface import HuggingFaceLLM

        self.llm = HuggingFaceLLM(
            model=model, tokenizer=tokenizer, max_new_tokens=max_new_tokens, generate_kwargs={"do_sample": False},
            is_chat_model=True, context_window=8192, device_map="cpu",
        )  # fmt: skip
        self.tokenizer = tokenizer
        self.embed_model = HuggingFaceEmbedding(model_name=encoder_path, device="cpu")
        self.client = chromadb.EphemeralClient()
        self.blocks: dict[str, Any] = {}

    def _block(self, user_id: str) -> Any:
        from llama_index.core.memory import VectorMemoryBlock
        from llama_index.vector_stores.chroma import ChromaVectorStore

        if user_id not in self.blocks:
            collection = self.client.create_collection(f"li-{len(self.blocks)}", metadata={"hnsw:space": "cosine"})
            self.blocks[user_id] = VectorMemoryBlock(
                vector_store=ChromaVectorStore(chroma_collection=collection), embed_model=self.embed_model,
                similarity_top_k=PEER_K,
            )  # fmt: skip
        return self.blocks[user_id]

    def _memory(self, user_id: str, token_limit: int) -> Any:
        from llama_index.core.memory import Memory

        return Memory.from_defaults(
            session_id=user_id, token_limit=token_limit, chat_history_token_ratio=0.5,
            token_flush_size=self.FLUSH_SIZE, memory_blocks=[self._block(user_id)],
        )  # fmt: skip

    def prepare(self, users: Sequence[User]) -> None:
        from llama_index.core.llms import ChatMessage

        for user in users:
            memory = self._memory(user.user_id, self.TOKEN_LIMIT)
            for turn in user.turns:
                memory.put(ChatMessage(role=turn.role, content=turn.content))
            # The conversation is over: what is still in the short-term queue goes to the block too.
            remaining = memory.get_all()
            memory.reset()
            if remaining:
                import asyncio

                asyncio.run(self._block(user.user_id).aput(remaining, from_short_term_memory=True, session_id=user.user_id))

    def answer(self, question: Question) -> Answer:
        from llama_index.core.llms import ChatMessage

        started = time.perf_counter()
        memory = self._memory(question.user_id, 8192)  # a fresh session: nothing in the short-term queue
        memory.put(ChatMessage(role="user", content=question.text))
        messages = memory.get()
        retrieval_s = time.perf_counter() - started
        text, ttft, total = timed_stream(r.delta or "" for r in self.llm.stream_chat(messages))
        prompt = self.llm.messages_to_prompt(messages)
        system = next((m.content or "" for m in messages if m.role == "system"), "")
        return Answer(text, len(self.tokenizer(prompt).input_ids), 0, (ttft or 0.0) + retrieval_s,
                      total + retrieval_s, [system] if system else [])


# -- running ------------------------------------------------------------------------------------


def evidence_text(users: dict[str, User], question: Question) -> str:
    session, index = question.evidence
    return next(t.content for t in users[question.user_id].turns if (t.session, t.index) == (session, index))


def hits(answer: Answer, evidence: str, ks: Sequence[int] = (1, PEER_K)) -> dict[str, bool]:
    """hit@k: the turn that states the fact is inside one of the first k retrieved texts."""
    return {f"hit@{k}": any(evidence in text for text in answer.retrieved[:k]) for k in ks}


def run_method(method: Method, users: Sequence[User], questions: Sequence[Question], show: bool) -> list[dict[str, Any]]:
    by_id = {u.user_id: u for u in users}
    began = time.perf_counter()
    method.prepare(users)
    prepare_s = time.perf_counter() - began
    rows = []
    for question in progress(questions, method.name, show, unit="question"):
        answer = method.answer(question)
        rows.append({
            "method": method.name, "key": question.key, "slot": question.slot, "question": question.text,
            "expected": question.answer, "stale_value": question.stale, "answer": answer.text,
            **score(question, answer.text), "prompt_tokens": answer.prompt_tokens,
            "injected_tokens": answer.injected_tokens, "processed_tokens": answer.processed_tokens,
            "ttft_s": answer.ttft_s, "total_s": answer.total_s, "retrieved": answer.retrieved[:PEER_K],
            **(hits(answer, evidence_text(by_id, question)) if answer.retrieved or method.name not in PEERS[:2] else {}),
            "prepare_s": prepare_s,
        })  # fmt: skip
    return rows


def summarize(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Facts answered and stale (counts and rates), mean tokens, median times, hit rates."""

    def median(key: str) -> float | None:
        values = [r[key] for r in rows if r.get(key) is not None]
        return statistics.median(values) if values else None

    n = len(rows)
    out: dict[str, Any] = {
        "questions": n,
        "facts_answered": sum(r["correct"] for r in rows),
        "stale": sum(r["stale"] for r in rows),
        "updated_questions": sum(1 for r in rows if r["stale_value"]),
        "processed_tokens": statistics.fmean(r["processed_tokens"] for r in rows) if rows else None,
        "prompt_tokens": statistics.fmean(r["prompt_tokens"] for r in rows) if rows else None,
        "injected_tokens": statistics.fmean(r["injected_tokens"] for r in rows) if rows else None,
        "ttft_s_p50": median("ttft_s"),
        "total_s_p50": median("total_s"),
        "prepare_s": rows[0]["prepare_s"] if rows else None,
    }
    for k in (1, PEER_K):
        flagged = [r[f"hit@{k}"] for r in rows if f"hit@{k}" in r]
        out[f"hit@{k}"] = statistics.fmean(flagged) if flagged else None
    return out


def markdown(result: dict[str, Any]) -> str:
    head = ("| method | facts answered | stale answers | processed tokens (prompt + injected) | "
            "TTFT p50 | total p50 | hit@1 | hit@4 |\n| --- | --- | --- | --- | --- | --- | --- | --- |")
    lines = [head]
    for name, s in result["summary"].items():
        def f(v: Any, digits: int = 2, unit: str = "") -> str:
            return "" if v is None else f"{v:.{digits}f}{unit}"

        lines.append(
            f"| {name} | {s['facts_answered']} / {s['questions']} | {s['stale']} / {s['updated_questions']} | "
            f"{f(s['processed_tokens'], 0)} ({f(s['prompt_tokens'], 0)} + {f(s['injected_tokens'], 0)}) | "
            f"{f(s['ttft_s_p50'], 2, ' s')} | {f(s['total_s_p50'], 2, ' s')} | {f(s['hit@1'])} | {f(s['hit@4'])} |"
        )
    return "\n".join(lines) + "\n"


def plot(result: dict[str, Any], path: Path) -> Path:
    plt = pyplot()
    summary = result["summary"]
    names = list(summary)
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    answered = [summary[n]["facts_answered"] / max(summary[n]["questions"], 1) for n in names]
    stale = [summary[n]["stale"] / max(summary[n]["questions"], 1) for n in names]
    colours = ["tab:green" if n.startswith("recall") else "tab:gray" for n in names]
    left.barh(names, answered, color=colours, label="fact answered")
    left.barh(names, stale, left=answered, color="tab:red", alpha=0.6, label="stale value")
    left.set_xlim(0, 1)
    left.set_xlabel("share of questions")
    left.invert_yaxis()
    left.legend(loc="lower right", fontsize=8)
    left.set_title("Facts answered")
    for name, colour in zip(names, colours, strict=True):
        s = summary[name]
        right.scatter(s["processed_tokens"], s["facts_answered"] / max(s["questions"], 1), color=colour, s=40)
        right.annotate(name, (s["processed_tokens"], s["facts_answered"] / max(s["questions"], 1)), fontsize=8,
                       xytext=(4, 3), textcoords="offset points")
    right.set_xscale("log")
    right.set_xlabel("processed tokens per question (prompt + injected, log)")
    right.set_ylabel("facts answered")
    right.set_title("Quality against cost")
    fig.suptitle(f"{result['model']} · {result['questions']} questions, {result['users']} users (seed {result['seed']})",
                 fontsize=10)
    return save(fig, path)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seed", default="eval", help=f"a name in {sorted(SEEDS)} or an integer (default: eval)")
    p.add_argument("--users", type=int, default=12)
    p.add_argument("--facts", type=int, default=17, help="facts per user (one question each)")
    p.add_argument("--limit", type=int, default=None, help="answer only the first N questions")
    p.add_argument("--methods", default=",".join(METHODS), help=f"comma-separated, from {', '.join(METHODS)}")
    p.add_argument("--variant", action="append", default=[],
                   help='also run recall with RecallConfig changes (and the store\'s unit= / retrieval=): '
                        '"NAME:field=value,..." (repeatable)')
    p.add_argument("--max-new-tokens", type=int, default=48)
    p.add_argument("--model", default=None, help="HF model folder (default: the embedded SmolLM2-135M-Instruct)")
    p.add_argument("--out", type=Path, default=OUT)
    p.add_argument("--no-progress", action="store_true")
    return p.parse_args(argv)


def build_methods(args: argparse.Namespace, generator: Any, encoder: Any, encoder_path: str | None,
                  peer_model: Callable[[], tuple[Any, Any]]) -> list[Method]:
    """The methods asked for; the peers get their own copy of the model, without recall's tokens."""
    from recall_core import RecallConfig

    names = [m.strip() for m in args.methods.split(",") if m.strip()]
    unknown = sorted(set(names) - set(METHODS))
    if unknown:
        raise SystemExit(f"unknown method(s) {unknown}; choose from {', '.join(METHODS)}")
    options = {"max_new_tokens": args.max_new_tokens}
    methods: list[Method] = []
    for name in names:
        if name in ("none", "history"):
            methods.append(PlainMethod(name, generator, options))
        elif name == "recall":
            methods.append(RecallMethod("recall", generator, {"max_tokens": args.max_new_tokens}, encoder))
        elif name == "recall-untuned":
            from recall_core import RecallGenerator

            plain = RecallGenerator.from_pretrained(args.model, device="cpu", tuned=False, config=generator.config)
            methods.append(RecallMethod(name, plain, {"max_tokens": args.max_new_tokens}, encoder))
        elif name in ("langchain", "llamaindex"):
            if encoder_path is None:
                raise SystemExit(f"{name} needs the real encoder (a sentence-transformers folder)")
            model, tokenizer = peer_model()
            cls = LangChainMethod if name == "langchain" else LlamaIndexMethod
            methods.append(cls(model, tokenizer, encoder_path, args.max_new_tokens))
    base = generator.config
    for text in args.variant:
        name, changes = parse_variant(text)
        store_options = {key: changes.pop(key) for key in STORE_OPTIONS if key in changes}
        methods.append(RecallMethod(name, generator, {"max_tokens": args.max_new_tokens}, encoder,
                                    config=RecallConfig(**{**base.to_dict(), **changes}), store_options=store_options))
    return methods


def run(args: argparse.Namespace, generator: Any = None, encoder: Any = None) -> dict[str, Any]:
    """Generate the conversations, run every method, return the result (also written under ``args.out``)."""
    seed = seed_of(args.seed)
    users = generate(seed, users=args.users, facts=args.facts)
    questions = [q for u in users for q in u.questions][: args.limit]
    encoder_path: str | None = None
    if encoder is None:
        from recall_core.memory.encoders import default_encoder, default_encoder_path

        encoder, encoder_path = default_encoder(), str(default_encoder_path())
    if generator is None:
        from recall_core import RecallGenerator

        generator = RecallGenerator.from_pretrained(args.model, device="cpu")

    def peer_model() -> tuple[Any, Any]:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        from recall_core.models.loading import default_model_dir

        source = args.model or str(default_model_dir())
        return AutoModelForCausalLM.from_pretrained(source).eval(), AutoTokenizer.from_pretrained(source)

    methods = build_methods(args, generator, encoder, encoder_path, peer_model)
    rows: list[dict[str, Any]] = []
    try:
        for method in methods:
            rows.extend(run_method(method, users, questions, not args.no_progress))
    finally:
        for method in methods:
            method.close()
    summary = {m.name: summarize([r for r in rows if r["method"] == m.name]) for m in methods}
    result = {
        "benchmark": "conversations", "schema_version": 1, "seed": seed, "users": len(users),
        "questions": len(questions), "model": str(args.model or "SmolLM2-135M-Instruct"),
        "encoder": getattr(encoder, "name", str(encoder)), "max_new_tokens": args.max_new_tokens,
        "recall_config": generator.config.to_dict(),
        "machine": machine(),
        "summary": summary, "rows": rows, "data": as_dict(users),
    }  # fmt: skip
    write_results(args.out, "conversations", result, markdown(result), plot)
    return result


def main(argv: Sequence[str] | None = None, generator: Any = None, encoder: Any = None) -> int:
    args = parse_args(argv)
    result = run(args, generator=generator, encoder=encoder)
    print(markdown(result))
    print(f"written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
