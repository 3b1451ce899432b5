"""The packaged all-MiniLM-L6-v2 encoder, offline: search quality, long words, its fast path, bf16."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from recall_core.memory import MemoryStore, MemoryWriter
from recall_core.memory.encoders import DEFAULT_ENCODER_NAME
from recall_core.memory.index import MEMORIES
from recall_core.types import RecallQuery
from tests.helpers.memories import RAW_TEXT


def test_real_minilm_end_to_end(tmp_path: Path) -> None:
    """The packaged all-MiniLM-L6-v2, offline: paraphrased questions find their facts."""
    facts = {
        "My sister Ana lives in Porto.": "Which city is my sister in?",
        "I am allergic to peanuts.": "What food should I avoid?",
        "My dog is called Biscuit.": "What's the name of my pet?",
        "I started learning the cello in March.": "Which instrument am I studying?",
    }
    with MemoryStore.local(tmp_path) as store:
        writer = MemoryWriter(store, **RAW_TEXT)
        writer.add_turns([{"user_id": "alice", "role": "user", "content": fact} for fact in facts])
        memory = store.for_user("alice")
        for fact, question in facts.items():
            best = memory.search(RecallQuery(question), k=2)[0]
            assert best.text == fact, question
            assert 0.2 < best.score <= 1.0
        meta = store.index.collection("alice", MEMORIES).metadata
        assert (meta["encoder"], meta["dim"]) == (DEFAULT_ENCODER_NAME, 384)
        # Chunks fit the encoder's window in its own tokens.
        long_turn = " ".join(f"Sentence {i} talks about topic number {i} in some detail." for i in range(200))
        ids = writer.add_turn("alice", "assistant", long_turn)
        records = [memory.get(i) for i in ids]
        assert len(ids) > 1 and all(store.encoder.count_tokens(r.text) <= 128 for r in records)


def test_minilm_reads_words_longer_than_its_tokenizer_limit(tmp_path: Path) -> None:
    """WordPiece makes one [UNK] of a word over 100 characters, so a long unbroken string
    was counted as one token and every piece of it embedded as the same meaningless vector."""
    from recall_core.memory import default_encoder

    encoder = default_encoder(precision="float32")
    assert encoder.count_tokens("a" * 150) > 1
    assert encoder.count_tokens("hello world") == 2  # ordinary text is counted as before
    blob = "".join(f"{i:x}" for i in range(3000))  # 10k characters, no space
    with MemoryStore.local(tmp_path, encoder=encoder) as store:
        ids = MemoryWriter(store, **RAW_TEXT).add_turn("u", "user", blob)
        records = store.for_user("u").all()
        assert len(ids) > 1 and "".join(r.text for r in records) == blob
        assert all(encoder.count_tokens(r.text) <= 128 for r in records)
        vectors = np.stack([v for _, v in store.for_user("u").all(include_embeddings=True)])
    unk = encoder.encode(["[UNK]"])[0]
    assert float(np.max(vectors @ unk)) < 0.9  # none of them is the unknown token's vector
    assert float(np.min(vectors @ vectors.T)) < 0.99  # and they differ from each other


def test_direct_query_path_equals_sentence_transformers_encode() -> None:
    """The short-input fast path gives the vectors SentenceTransformer.encode gives."""
    from recall_core.memory import default_encoder

    encoder = default_encoder(precision="float32")  # compare like with like
    texts = ["Where does my sister live?", "A somewhat longer query about the cello lessons in March."]
    direct = encoder.encode(texts)
    reference = encoder.model.encode(texts, normalize_embeddings=True, convert_to_numpy=True)
    assert np.allclose(direct, reference, atol=1e-5)
    many = encoder.encode(texts * 5)  # above the fast-path size: encode() itself
    assert np.allclose(many[:2], reference, atol=1e-5)


def test_bfloat16_and_float32_vectors_agree() -> None:
    """Memories written with bf16 autocast are searched by float32 queries (and back) without loss."""
    from recall_core.memory import default_encoder

    texts = ["My sister Ana lives in Porto.", "I am allergic to peanuts.", "Which city is my sister in?"]
    fp32 = default_encoder(precision="float32").encode(texts)
    bf16 = default_encoder(precision="bfloat16").encode(texts)
    assert np.min(np.sum(fp32 * bf16, axis=1)) > 0.999
    with pytest.raises(ValueError, match="precision"):
        default_encoder(precision="int4")
