"""``RecallConfig.base_replies`` on a real llama.cpp server: the recall-tuned model (the adapter
merged, F16) served with the recall adapter beside it as a LoRA GGUF, loaded unapplied. A reply
that reads no notes is sent with the adapter at scale -1, which takes it out again: the reply is
the plain model's in process, token for token, and everything else is the tuned model's."""

from __future__ import annotations

from pathlib import Path

import pytest

from recall_core import RecallConfig, RecallGenerator
from recall_core.models.loading import DEFAULT_ADAPTER, default_model_dir
from recall_core.serving import EngineServer, ServedRecallGenerator
from recall_core.serving.gguf_lora import export_lora_gguf
from tests.integration.test_serving import FACTS, Notes

pytestmark = pytest.mark.server

ON = RecallConfig(base_replies=True)
NEWS = [
    "my brother's band is playing at the Crown on saturday, might go if I'm not wrecked",
    "We finally got the keys to the new flat today!",
    "Tell me about the history of tea in England.",
]


@pytest.fixture(scope="module")
def engine(tuned_gguf: Path, tmp_path_factory: pytest.TempPathFactory):
    adapter = export_lora_gguf(DEFAULT_ADAPTER, default_model_dir(), tuned_gguf.with_name("recall-adapter.gguf"))
    server = EngineServer(tuned_gguf, lora=adapter, log_path=tmp_path_factory.mktemp("engine") / "engine.log")
    with server:
        yield server


@pytest.fixture(scope="module")
def served(engine: EngineServer, smollm) -> ServedRecallGenerator:
    return ServedRecallGenerator(engine.url, smollm[1], timeout=30)


def test_the_adapter_is_served_unapplied(served: ServedRecallGenerator) -> None:
    (adapter,) = served.client.lora_adapters()
    assert adapter["id"] == 0 and adapter["scale"] == 0.0 and Path(adapter["path"]).name == "recall-adapter.gguf"


def test_replies_that_read_no_notes_are_the_plain_models(served: ServedRecallGenerator, smollm, smollm_plain) -> None:
    tuned = RecallGenerator(*smollm)
    plain = RecallGenerator(*smollm_plain)
    differ = 0
    for text in NEWS:
        messages = [{"role": "user", "content": text}]
        theirs = served.generate(messages, memory=None, config=ON, max_new_tokens=24)
        assert theirs.sequences.tolist() == plain.generate(messages, memory=None, max_new_tokens=24).sequences.tolist()
        assert theirs.text == tuned.generate(messages, memory=None, config=ON, max_new_tokens=24).text, text
        differ += served.generate(messages, memory=None, max_new_tokens=24).text != theirs.text
    assert differ >= 1  # the tuned model's own replies (the adapter applied) are not the plain model's


def test_what_reads_notes_stays_the_tuned_models(served: ServedRecallGenerator, smollm) -> None:
    tuned = RecallGenerator(*smollm)
    memory = Notes(list(FACTS.values()))
    messages = [{"role": "user", "content": "What is my dog called?"}]
    theirs = served.generate(messages, memory=memory, config=ON, max_new_tokens=20)
    mine = tuned.generate(messages, memory=memory, max_new_tokens=20)
    assert theirs.sequences.tolist() == mine.sequences.tolist() and "Biscuit" in theirs.text


def test_a_tuned_reply_after_a_base_reply_is_not_computed_on_its_cache(served: ServedRecallGenerator, smollm) -> None:
    """The same prompt, base then tuned on one slot: the tuned reply is the tuned model's alone (the
    engine would otherwise reuse the prefix the base reply computed with the adapter at -1)."""
    tuned = RecallGenerator(*smollm)
    for text in NEWS[:2]:
        messages = [{"role": "user", "content": text}]
        served.generate(messages, memory=None, config=ON, max_new_tokens=8)
        theirs = served.generate(messages, memory=None, max_new_tokens=24)
        assert theirs.sequences.tolist() == tuned.generate(messages, memory=None, max_new_tokens=24).sequences.tolist()
        assert theirs.output.requests[0].cached_tokens == 0, text  # computed again, not taken from the base's
