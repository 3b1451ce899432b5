"""The RAG recipes a framework user writes in ten lines, as the benchmarks' peers.

LangChain: ``ChatHuggingFace(HuggingFacePipeline)`` with a ``langchain-chroma`` retriever
over the exchanges, the notes in the system message (LangChain's RAG prompt). LlamaIndex:
``HuggingFaceLLM`` with ``Memory`` and a ``VectorMemoryBlock``. Both answer with the same model
and encoder as recall, greedily, and retrieve ``PEER_K`` texts. The frameworks are imported
when a recipe is built (they are the ``bench`` extra).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from benchmarks.common.methods import PEER_K, Answer, Method
from benchmarks.common.timing import timed_stream
from recall_core.dates import day_label
from recall_core.training.conversations import Question, User

#: LangChain's RAG prompt (the RAG tutorial's), with the notes from past conversations.
LANGCHAIN_SYSTEM = (
    "You are an assistant for question-answering tasks. Use the following pieces of retrieved context "
    "from past conversations with the user to answer the question. If you don't know the answer, say that "
    "you don't know. Use three sentences maximum and keep the answer concise.\n\n{context}"
)


def exchanges(user: User) -> list[tuple[str, str, Any]]:
    """``(the exchange's text, its first turn, its session)`` for every exchange of a user: a user
    turn with the reply after it, and any other turn on its own (an assistant's turn that answers
    no user turn: until 2026-12-06 it was never indexed, and 31 of the ``duo`` family's 210 turns,
    updates among them, were out of the recipe's reach). Each text starts with its session's day,
    as a user storing a dated conversation writes it and as the LoCoMo recipe does
    (``benchmarks/locomo/peer.py``): until 2026-12-06 the recipe's documents had no date, so it
    could not tell a changed fact's old value from the new one, while recall's notes are dated."""
    out = []
    turns = user.turns
    answered_turns: set[int] = set()
    for i, turn in enumerate(turns):
        if i in answered_turns:
            continue
        reply = turns[i + 1] if turn.role == "user" and i + 1 < len(turns) and turns[i + 1].role == "assistant" else None
        if reply is not None:
            answered_turns.add(i + 1)
        # Named speakers (a family's two friends' chat) are labelled by name, as the notes label
        # them; the conversations generator's turns have no speaker.
        said = getattr(turn, "speaker", "") or turn.role
        replied = (getattr(reply, "speaker", "") or "assistant") if reply else ""
        text = f"{said}: {turn.content}" + (f"\n{replied}: {reply.content}" if reply else "")
        day = day_label(turn.date) if getattr(turn, "date", "") else ""
        out.append((f"[{day}] {text}" if day else text, turn.content, turn.session))
    return out


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
        return self.respond(question.user_id, question.text)

    def respond(self, user_id: str, question: str, system: str | None = None,
                earlier: Sequence[Mapping[str, str]] = ()) -> Answer:  # fmt: skip
        """The recipe's answer: the ``PEER_K`` exchanges retrieved for ``question`` in LangChain's RAG
        system message (after ``system``, the caller's own, when given), then the ``earlier``
        exchanges (``{"role", "content"}``) and the question. ``retrieved`` holds the exchanges."""
        from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

        started = time.perf_counter()
        docs = self.stores[user_id].as_retriever(search_kwargs={"k": PEER_K}).invoke(question)
        rag = LANGCHAIN_SYSTEM.format(context="\n\n".join(doc.page_content for doc in docs))
        said = [HumanMessage(m["content"]) if m["role"] == "user" else AIMessage(m["content"]) for m in earlier]
        messages = [SystemMessage(f"{system}\n\n{rag}" if system else rag), *said, HumanMessage(question)]
        text, ttft, total = timed_stream(str(chunk.content) for chunk in self.chat.stream(messages))
        retrieval_s = time.perf_counter() - started - total
        tokens = len(self.tokenizer(self.chat._to_chat_prompt(messages)).input_ids)
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
        self.client = chromadb.EphemeralClient()  # one store per process, whichever client: names of its own
        self.prefix = f"li-{uuid.uuid4().hex[:8]}"  # (two recipes in one process both made "li-0")
        self.blocks: dict[str, Any] = {}

    def _block(self, user_id: str) -> Any:
        from llama_index.core.memory import VectorMemoryBlock
        from llama_index.vector_stores.chroma import ChromaVectorStore

        if user_id not in self.blocks:
            collection = self.client.create_collection(f"{self.prefix}-{len(self.blocks)}", metadata={"hnsw:space": "cosine"})
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
        import asyncio

        # One event loop for all of a user's turns: Memory's sync methods each run their own loop,
        # which its SQL store's worker thread outlives ("Event loop is closed" tracebacks on stderr).
        for user in users:
            asyncio.run(self._write(user))

    async def _write(self, user: User) -> None:
        from llama_index.core.llms import ChatMessage
        from llama_index.core.storage.chat_store.base_db import MessageStatus

        memory = self._memory(user.user_id, self.TOKEN_LIMIT)
        for turn in user.turns:
            await memory.aput(ChatMessage(role=turn.role, content=turn.content))
        # The conversation is over: what is still in the short-term queue goes to the block too. Only
        # that (ACTIVE): Memory keeps the messages it flushed, marked ARCHIVED, and until 2026-12-07
        # every user's whole conversation went in again as one more document (a reviewer).
        remaining = await memory.aget_all(status=MessageStatus.ACTIVE)
        await memory.areset()
        if remaining:
            await self._block(user.user_id).aput(remaining, from_short_term_memory=True, session_id=user.user_id)

    def answer(self, question: Question) -> Answer:
        return self.respond(question.user_id, question.text)

    def respond(self, user_id: str, question: str, system: str | None = None,
                earlier: Sequence[Mapping[str, str]] = ()) -> Answer:  # fmt: skip
        """The recipe's answer in a fresh session: the ``earlier`` exchanges (``{"role", "content"}``)
        and ``question`` go into a new ``Memory`` (what its block searches with), whose ``get()``
        opens with a system message holding what the block retrieved; ``system``, the caller's own,
        goes before it, as LlamaIndex's agents put their ``system_prompt``
        (``llama_index.core.agent.workflow.base_agent``). ``retrieved`` holds that system message."""
        from llama_index.core.llms import ChatMessage

        started = time.perf_counter()
        memory = self._memory(user_id, 8192)  # a fresh session: nothing in the short-term queue
        for message in [*earlier, {"role": "user", "content": question}]:  # the caller's system apart
            memory.put(ChatMessage(role=message["role"], content=message["content"]))
        retrieved = memory.get()
        messages = [ChatMessage(role="system", content=system), *retrieved] if system else retrieved
        retrieval_s = time.perf_counter() - started
        text, ttft, total = timed_stream(r.delta or "" for r in self.llm.stream_chat(messages))
        notes = next((m.content or "" for m in retrieved if m.role == "system"), "")
        tokens = len(self.tokenizer(self.llm.messages_to_prompt(messages)).input_ids)
        return Answer(text, tokens, 0, (ttft or 0.0) + retrieval_s, total + retrieval_s, [notes] if notes else [])
