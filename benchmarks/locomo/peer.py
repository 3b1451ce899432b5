"""(g): the LangChain recipe on LoCoMo, the peer the project is measured against, on conversations
written outside it.

The recipe is the one of the held-out benchmark (:class:`~benchmarks.common.peers.LangChainMethod`):
``ChatHuggingFace(HuggingFacePipeline)`` on the plain model, a ``langchain-chroma`` retriever with
the same encoder, k=4, the documents in LangChain's RAG system message after the caller's own
(here the protocol's system prompt). What LoCoMo adds is only what the documents are: each
exchange of a session (a turn and the other speaker's answer, in order), labelled with its
speakers and, in front, its session's day (``"[8 May, 2023] Caroline: ...\\nMelanie: ..."``), as a
user storing a dated conversation would write it. Without the day no recipe can answer
LoCoMo's "when" questions, and (c)'s excerpts carry it too. Four exchanges are eight turns, about
(c)'s ten.

As in the held-out benchmark, the chat model writes until its end or ``--max-new-tokens`` (the
recipe sets no stop), where (a) to (f) stop at the answer's first line; every method is scored on
its first line, so only (g)'s ``total_s`` and ``generated_tokens`` include the rest. Its
``ttft_s`` includes the retrieval.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable, Sequence
from typing import Any

from benchmarks.common.locomo_data import Conversation, DialogTurn
from benchmarks.common.peers import LangChainMethod
from benchmarks.locomo.prompts import Prompt, turn_line
from recall_core.memory.text.composition import day_label


def exchanges(conversation: Conversation) -> list[tuple[str, tuple[str, ...]]]:
    """``(document text, the dia_ids it holds)`` for each exchange of ``conversation``: its turns
    paired in order within each session (LoCoMo's two speakers take turns; an odd last turn
    stands alone)."""
    out = []
    for session in _sessions(conversation.turns):
        for i in range(0, len(session), 2):
            pair = session[i : i + 2]
            day = day_label(pair[0].date)
            text = "\n".join(turn_line(t) for t in pair)
            out.append((f"[{day}] {text}" if day else text, tuple(t.dia_id for t in pair)))
    return out


def _sessions(turns: Iterable[DialogTurn]) -> list[list[DialogTurn]]:
    sessions: dict[int, list[DialogTurn]] = {}
    for turn in turns:
        sessions.setdefault(turn.session, []).append(turn)
    return [sessions[s] for s in sorted(sessions)]


class LocomoLangChain(LangChainMethod):
    """The LangChain recipe over LoCoMo conversations, one Chroma collection per conversation."""

    name = "langchain"

    def __init__(self, model: Any, tokenizer: Any, encoder_path: str, max_new_tokens: int) -> None:
        super().__init__(model, tokenizer, encoder_path, max_new_tokens)
        #: per conversation, each document's text -> the dia_ids of its turns (for evidence hits;
        #: two documents with the same text, which only a repeated exchange on one day could
        #: give, share the ids of both)
        self.turns: dict[str, dict[str, tuple[str, ...]]] = {}

    def prepare_conversations(self, conversations: Sequence[Conversation]) -> None:
        """Write each conversation's exchanges into its own collection (embedded Chroma, cosine)."""
        from langchain_chroma import Chroma

        for conversation in conversations:
            # Ephemeral clients of one process share one system: a name of its own per run.
            store = Chroma(
                collection_name=f"locomo-{uuid.uuid4().hex[:12]}", embedding_function=self.embeddings,
                client=self.client, collection_metadata={"hnsw:space": "cosine"},
            )  # fmt: skip
            docs = exchanges(conversation)
            if docs:  # Chroma refuses an empty batch; a conversation with no turns retrieves nothing
                store.add_texts([text for text, _ in docs], metadatas=[{"dia_ids": ",".join(ids)} for _, ids in docs])
            self.stores[conversation.sample_id] = store
            turns: dict[str, tuple[str, ...]] = {}
            for text, ids in docs:
                turns[text] = turns.get(text, ()) + ids
            self.turns[conversation.sample_id] = turns

    def run(self, sample_id: str, prompt: Prompt) -> dict[str, Any]:
        """One answer, with the fields :meth:`benchmarks.locomo.bench.Bench.generate` returns
        (``processed_tokens`` is the whole prompt the chat model read; nothing is injected), and
        ``retrieved``: the dia_ids of each document, best first."""
        answer = self.respond(sample_id, prompt.user, prompt.system)
        generated = len(self.tokenizer(answer.text, add_special_tokens=False).input_ids)
        return {
            "text": answer.text, "prompt_tokens": answer.prompt_tokens, "injected_tokens": 0,
            "processed_tokens": answer.prompt_tokens, "generated_tokens": generated,
            "ttft_s": answer.ttft_s, "total_s": answer.total_s, "recalls": [],
            "retrieved": [list(self.turns[sample_id][doc]) for doc in answer.retrieved],
        }  # fmt: skip


#: The store's names for its packaged MiniLM (``recall_core.memory.encoders.load_encoder``).
_DEFAULT_ENCODER = re.compile(r"default|all-minilm-l6-v2|sentence-transformers/all-minilm-l6-v2", re.IGNORECASE)
_HASH_ENCODER = re.compile(r"hash(-\d+)?", re.IGNORECASE)


def encoder_path(encoder: str | None) -> str:
    """What ``HuggingFaceEmbeddings`` loads for the store's ``--encoder``: the packaged MiniLM's
    folder for the store's default and its names, else the path or name given. A hash encoder
    is not a model: ``ValueError``."""
    from recall_core.memory.encoders import default_encoder_path

    if encoder is None or _DEFAULT_ENCODER.fullmatch(encoder):
        return str(default_encoder_path())
    if _HASH_ENCODER.fullmatch(encoder):
        raise ValueError(f"encoder: the LangChain recipe embeds with a sentence-transformers model, not {encoder!r}")
    return encoder


def load_recipe(conversations: Sequence[Conversation], max_new_tokens: int, encoder: str | None,
                device: Any = "cpu") -> LocomoLangChain:  # fmt: skip
    """The recipe on the plain embedded model (as transformers loads it; the issue's peer, whatever
    ``--model`` the recall arms run), on ``device``, with ``encoder`` (:func:`encoder_path`),
    every conversation written."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from recall_core.models.loading import default_model_dir

    source = str(default_model_dir())
    model = AutoModelForCausalLM.from_pretrained(source).to(device).eval()
    tokenizer = AutoTokenizer.from_pretrained(source)
    recipe = LocomoLangChain(model, tokenizer, encoder_path(encoder), max_new_tokens)
    recipe.prepare_conversations(conversations)
    return recipe
