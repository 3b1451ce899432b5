"""The probe's damaged KV block file, on the embedded default model: never used, the answer unchanged."""

from __future__ import annotations

import struct

from recall_core import RecallConfig, RecallGenerator
from recall_core.kv.memories import KVMemories
from tests.helpers.memories import FixedMemory

FACT = "The user's dog is called Zorblax."
QUESTION = [{"role": "user", "content": "What is my dog's name?"}]


def test_a_garbled_block_file_is_recomputed_and_the_answer_is_the_same(smollm, tmp_path, monkeypatch):
    monkeypatch.setenv("RECALL_HOME", str(tmp_path / "home"))
    model, tokenizer = smollm
    gen = RecallGenerator(model, tokenizer, memory=FixedMemory(FACT), config=RecallConfig(inject_mode="kv"))
    folder = tmp_path / "kv"
    sound = gen.generate(QUESTION, max_new_tokens=12, recall_kv_memories=KVMemories(disk=folder))
    assert "Zorblax" in sound.text
    note = max(folder.rglob("*.safetensors"), key=lambda f: f.stat().st_size)
    raw = bytearray(note.read_bytes())
    start = 8 + struct.unpack("<Q", raw[:8])[0]
    raw[start:] = b"\x7f" * (len(raw) - start)  # float32 3.39e38 everywhere; the header intact
    note.write_bytes(bytes(raw))
    again = gen.generate(QUESTION, max_new_tokens=12, recall_kv_memories=KVMemories(disk=folder))
    (recall,) = [r for r in again.recalls if r.inject_mode == "kv"]
    assert again.text == sound.text and recall.kv_discarded == 1
