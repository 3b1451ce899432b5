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
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from benchmarks.common.locomo_data import Conversation, DialogTurn
from benchmarks.common.peers import LangChainMethod
from benchmarks.locomo.prompts import Prompt, turn_line
from recall_core.memory.text.composition import day_label


def exchanges(conversation: Conversation) -> list[tuple[str, tuple[str, ...]]]:
    """``(document text, the dia_ids it holds)`` for each exchange of ``conversation``: its turns
    paired in order within each session (an odd last turn stands alone)."""
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
        #: per conversation, each document's text -> the dia_ids of its turns (for evidence hits)
        self.turns: dict[str, dict[str, tuple[str, ...]]] = {}

    def prepare_conversations(self, conversations: Sequence[Conversation]) -> None:
        """Write each conversation's exchanges into its own collection (embedded Chroma, cosine)."""
        from langchain_chroma import Chroma

        for conversation in conversations:
            store = Chroma(
                collection_name=f"locomo-{len(self.stores)}", embedding_function=self.embeddings,
                client=self.client, collection_metadata={"hnsw:space": "cosine"},
            )  # fmt: skip
            docs = exchanges(conversation)
            store.add_texts([text for text, _ in docs], metadatas=[{"dia_ids": ",".join(ids)} for _, ids in docs])
            self.stores[conversation.sample_id] = store
            self.turns[conversation.sample_id] = dict(docs)

    def run(self, sample_id: str, prompt: Prompt) -> dict[str, Any]:
        """One answer, with the fields :meth:`benchmarks.locomo.bench.Bench.generate` returns
        (``processed_tokens`` is the whole prompt the chat model read; nothing is injected), and
        ``retrieved``: the dia_ids of each document, best first."""
        answer = self.respond(sample_id, prompt.user, prompt.system)
        generated = len(self.tokenizer(answer.text, add_special_tokens=False).input_ids)
        return {
            "text": answer.text, "prompt_tokens": answer.prompt_tokens, "injected_tokens": 0,
            "processed_tokens": answer.prompt_tokens, "generated_tokens": generated,
            "ttft_s": answer.ttft_s or answer.total_s, "total_s": answer.total_s, "recalls": [],
            "retrieved": [list(self.turns[sample_id].get(doc, ())) for doc in answer.retrieved],
        }  # fmt: skip


def load_recipe(conversations: Sequence[Conversation], max_new_tokens: int, encoder: str | None) -> LocomoLangChain:
    """The recipe on the plain embedded model (as transformers loads it) and ``encoder`` (default:
    the store's MiniLM), every conversation written."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from recall_core.memory.encoders import default_encoder_path
    from recall_core.models.loading import default_model_dir

    source = str(default_model_dir())
    model, tokenizer = AutoModelForCausalLM.from_pretrained(source).eval(), AutoTokenizer.from_pretrained(source)
    recipe = LocomoLangChain(model, tokenizer, encoder or str(default_encoder_path()), max_new_tokens)
    recipe.prepare_conversations(conversations)
    return recipe
