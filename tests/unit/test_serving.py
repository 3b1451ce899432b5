"""The served backend's parts that need no engine: refusals, sampling options, the client's
errors against peers that are down, hung or cut off mid-reply (real sockets), and the GGUF export
of a tiny random Llama. The engine itself is exercised in tests/integration/test_serving.py."""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from gguf import GGUFReader, TokenType

from recall_core import RecallConfig
from recall_core.memory.chroma_server import free_port
from recall_core.serving import EngineClient, EngineError, ServedRecallGenerator, export_gguf
from recall_core.serving.engine import engine_command
from recall_core.serving.loop import check_served_config, sampling_options
from recall_core.tokens import MEMORY_PAD_TOKEN, RECALL_TOKEN, add_recall_tokens
from tests.helpers.engines import ScriptedEngine
from tests.helpers.memories import FixedMemory, ListMemory
from tests.helpers.tiny import tiny_model, tiny_tokenizer

MEMORY = object()


@pytest.mark.parametrize(
    ("config", "word"),
    [(RecallConfig(inject_mode="kv"), "inject_mode='kv'"), (RecallConfig(query_mode="hidden"), "query_mode='hidden'"),
     (RecallConfig(recall_policy="uncertainty"), "recall_policy='uncertainty'")],
)  # fmt: skip
def test_features_that_need_the_model_are_refused(config: RecallConfig, word: str) -> None:
    with pytest.raises(ValueError, match=word):
        check_served_config(config, MEMORY)  # type: ignore[arg-type]
    check_served_config(RecallConfig(), MEMORY)  # type: ignore[arg-type]


def test_sampling_options_follow_transformers_defaults() -> None:
    greedy = sampling_options({"do_sample": False}, 16)
    assert (greedy["temperature"], greedy["top_k"], greedy["min_p"], greedy["n_predict"]) == (0.0, 1, 0.0, 16)
    sampled = sampling_options({"do_sample": True, "temperature": 0.7, "seed": 3}, 8)
    # llama.cpp's own defaults (top_k 40, min_p 0.05) would sample another distribution.
    assert (sampled["temperature"], sampled["top_k"], sampled["top_p"], sampled["min_p"], sampled["seed"]) == (
        0.7, 50, 1.0, 0.0, 3)  # fmt: skip
    assert sampling_options({"max_time": 2.5}, 8)["t_max_predict_ms"] == 2500
    with pytest.raises(ValueError, match="output_scores: not supported on a served backend"):
        sampling_options({"output_scores": True}, 8)


def test_client_arguments_are_checked() -> None:
    with pytest.raises(ValueError, match="url must be an http"):
        EngineClient("127.0.0.1:8080")
    with pytest.raises(ValueError, match="timeout must be"):
        EngineClient("http://127.0.0.1:8080", timeout=0)
    for bad in ({"timeout": True}, {"connect_timeout": -1}, {"connect_timeout": float("inf")}, {"max_connections": 0}):
        with pytest.raises(ValueError, match=f"{next(iter(bad))} must be"):
            EngineClient("http://127.0.0.1:8080", **bad)


def test_served_and_engine_arguments_are_checked_by_name(tmp_path: Path) -> None:
    """A bad ``context_window`` was taken, then blamed on the prompt ("longer than the model's context
    window of -5"), or failed with a TypeError; a bad ``-sps`` or ``threads=True`` reached the engine
    (a reviewer, 2026-12-07)."""
    from recall_core.serving.engine import EngineServer

    _, tokenizer = tiny_model("llama")
    for bad in (-5, 0, 1, 1.5, "x", True):
        with pytest.raises(ValueError, match="context_window must be an int >= 2"):
            ServedRecallGenerator("http://127.0.0.1:9", tokenizer, context_window=bad)
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    for bad in ({"slot_prompt_similarity": 5}, {"slot_prompt_similarity": "a"}, {"threads": True}, {"parallel": 0}):
        with pytest.raises(ValueError, match=f"{next(iter(bad))} must be"):
            EngineServer(model, **bad)
    # NumPy's numbers are numbers (a config read with numpy, a benchmark's grid)
    EngineServer(model, parallel=np.int64(2), threads=np.int64(1), slot_prompt_similarity=np.float64(0.1))
    EngineClient("http://127.0.0.1:9", timeout=np.float64(3), max_connections=np.int64(4))
    ServedRecallGenerator("http://127.0.0.1:9", tokenizer, context_window=np.int64(64))


def test_an_engine_that_is_down_fails_at_once() -> None:
    client = EngineClient(f"http://127.0.0.1:{free_port()}", timeout=5)
    started = time.monotonic()
    with pytest.raises(EngineError, match="not reachable.*is it running"):
        client.complete([1, 2, 3], {"n_predict": 4})
    assert time.monotonic() - started < 3
    assert not client.health()


class _Peer:
    """A TCP peer on 127.0.0.1 that reads a request and then says ``reply`` (or nothing) and holds or closes."""

    def __init__(self, reply: bytes | None, close: bool) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.port = self.sock.getsockname()[1]
        self.reply, self.close = reply, close
        self.conns: list[socket.socket] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        conn, _ = self.sock.accept()
        self.conns.append(conn)
        conn.recv(65536)
        if self.reply is not None:
            conn.sendall(self.reply)
        if self.close:
            conn.close()

    def stop(self) -> None:
        for conn in self.conns:
            conn.close()
        self.sock.close()


def test_a_hung_engine_fails_within_the_timeout() -> None:
    peer = _Peer(None, close=False)
    try:
        client = EngineClient(f"http://127.0.0.1:{peer.port}", timeout=1.0)
        started = time.monotonic()
        with pytest.raises(EngineError, match="no answer within 1s"):
            client.complete([1, 2, 3], {"n_predict": 4})
        assert time.monotonic() - started < 3
    finally:
        peer.stop()


def test_an_engine_killed_mid_reply_is_reported() -> None:
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
    event = b'data: {"tokens": [5], "stop": false}\n\n'
    chunk = hex(len(event))[2:].encode() + b"\r\n" + event + b"\r\n"
    peer = _Peer(head + chunk, close=True)  # one token, then the connection drops
    try:
        seen: list[list[int]] = []
        client = EngineClient(f"http://127.0.0.1:{peer.port}", timeout=2.0)
        with pytest.raises(EngineError, match="closed"):
            client.complete([1, 2, 3], {"n_predict": 4}, on_tokens=lambda tokens, _: seen.append(tokens))
        assert seen == [[5]]
    finally:
        peer.stop()


def test_served_generator_needs_the_recall_tokens_and_keeps_no_cache() -> None:
    with pytest.raises(ValueError, match="no <recall>"):
        ServedRecallGenerator("http://127.0.0.1:1", tiny_tokenizer())
    model, tokenizer = tiny_model("llama")
    generator = ServedRecallGenerator("http://127.0.0.1:1", tokenizer, context_window=512)
    assert generator.served and generator.model is None and generator.context_window == 512
    ids = generator.encode([{"role": "user", "content": "hi"}])
    with pytest.raises(ValueError, match="prefix cache is the session"):
        generator.generate_ids(ids, past_key_values=object())
    with pytest.raises(ValueError, match="kv"):
        generator.kv_precompute()


def test_export_gguf_keeps_ids_and_stops_at_recall(tmp_path: Path) -> None:
    model, tokenizer = tiny_model("llama")
    folder = tmp_path / "tiny"
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    out = export_gguf(folder, tmp_path / "tiny.f16.gguf", "f16")
    reader = GGUFReader(out)
    tokens = reader.fields["tokenizer.ggml.tokens"].contents()
    vocab = tokenizer.get_vocab()
    assert len(tokens) == len(vocab) and all(tokens[i] == t for t, i in vocab.items())
    types = reader.fields["tokenizer.ggml.token_type"].contents()
    recall_id, pad_id = vocab[RECALL_TOKEN], vocab[MEMORY_PAD_TOKEN]
    assert types[recall_id] == types[pad_id] == int(TokenType.CONTROL)
    assert reader.fields["tokenizer.ggml.eom_token_id"].contents() == recall_id
    assert reader.fields["recall.recall_token_id"].contents() == recall_id
    tensors = {t.name: t for t in reader.tensors}
    config = model.config
    assert len(tensors) == 2 + (not config.tie_word_embeddings) + 9 * config.num_hidden_layers
    # q rows are permuted into llama.cpp's interleaved rotary layout; v rows are not touched.
    q = model.model.layers[0].self_attn.q_proj.weight.detach().numpy()
    heads = config.num_attention_heads
    expected = q.reshape(heads, 2, q.shape[0] // heads // 2, q.shape[1]).swapaxes(1, 2).reshape(q.shape)
    stored = np.asarray(tensors["blk.0.attn_q.weight"].data, dtype=np.float32).reshape(q.shape)
    assert np.allclose(stored, expected, atol=1e-3) and not np.allclose(stored, q, atol=1e-3)
    v = model.model.layers[0].self_attn.v_proj.weight.detach().numpy()
    assert np.allclose(np.asarray(tensors["blk.0.attn_v.weight"].data, dtype=np.float32).reshape(v.shape), v, atol=1e-3)
    assert not (tmp_path / "tiny.f16.gguf.partial").exists()


def test_export_gguf_says_a_head_size_other_than_hidden_over_heads(tmp_path: Path) -> None:
    """Without the key and value lengths llama.cpp took 64 / 4 = 16 for a head of 32 and refused
    the model ("invalid n_rot: 32, expected 16"; until 2026-12-07: a reviewer)."""
    from transformers import LlamaConfig, LlamaForCausalLM

    _, tokenizer = tiny_model("llama")
    lengths = {}
    for head_dim in (16, 32):
        config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128, num_hidden_layers=1,
                             num_attention_heads=4, num_key_value_heads=2, head_dim=head_dim)  # fmt: skip
        folder = tmp_path / f"hd{head_dim}"
        LlamaForCausalLM(config).save_pretrained(folder)
        tokenizer.save_pretrained(folder)
        fields = GGUFReader(export_gguf(folder, tmp_path / f"hd{head_dim}.gguf", "f32")).fields
        lengths[head_dim] = [fields[f"llama.{name}"].contents() if f"llama.{name}" in fields else None
                             for name in ("rope.dimension_count", "attention.key_length", "attention.value_length")]  # fmt: skip
    assert lengths == {16: [16, None, None], 32: [32, 32, 32]}


def test_export_gguf_without_the_recall_tokens_has_no_eom(tmp_path: Path) -> None:
    model, tokenizer = tiny_model("llama")
    folder = tmp_path / "tiny"
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    out = export_gguf(folder, tmp_path / "tiny.gguf", "f32", stop_at_recall=False)
    assert "tokenizer.ggml.eom_token_id" not in GGUFReader(out).fields
    with pytest.raises(ValueError, match="out_type must be one of"):
        export_gguf(folder, tmp_path / "x.gguf", "q4_k")


def test_export_lora_gguf_writes_the_adapter_as_llama_cpp_reads_it(tmp_path: Path) -> None:
    """The recall adapter as a llama.cpp LoRA: peft's A and B under llama.cpp's names, B's q / k rows
    permuted as the merged weights are, alpha for llama.cpp's alpha / r scale; no token rows."""
    import torch
    from peft import LoraConfig, get_peft_model

    from recall_core.serving.gguf_lora import export_lora_gguf

    model, tokenizer = tiny_model("llama")
    folder = tmp_path / "tiny"
    model.save_pretrained(folder)
    config = LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "k_proj", "v_proj", "down_proj"],
                        trainable_token_indices=[len(tokenizer) - 1])  # fmt: skip
    adapted = get_peft_model(model, config)
    with torch.no_grad():
        for name, param in adapted.named_parameters():
            if "lora_B" in name:
                param.normal_()  # peft starts B at zero: a permutation of zeros proves nothing
    adapted.save_pretrained(tmp_path / "adapter")
    out = export_lora_gguf(tmp_path / "adapter", folder, tmp_path / "adapter.gguf")
    reader = GGUFReader(out)
    assert reader.fields["general.type"].contents() == "adapter" and reader.fields["adapter.type"].contents() == "lora"
    assert reader.fields["adapter.lora.alpha"].contents() == 8.0
    tensors = {t.name: np.asarray(t.data, dtype=np.float32) for t in reader.tensors}
    layers = model.config.num_hidden_layers
    assert len(tensors) == 2 * 4 * layers and not any("token" in name for name in tensors)
    layer = adapted.base_model.model.model.layers[0]
    heads = model.config.num_attention_heads
    b_q = layer.self_attn.q_proj.lora_B["default"].weight.detach().numpy()
    expected = b_q.reshape(heads, 2, b_q.shape[0] // heads // 2, b_q.shape[1]).swapaxes(1, 2).reshape(b_q.shape)
    assert np.array_equal(tensors["blk.0.attn_q.weight.lora_b"].reshape(b_q.shape), expected)
    assert not np.array_equal(expected, b_q)
    a_q = layer.self_attn.q_proj.lora_A["default"].weight.detach().numpy()
    assert np.array_equal(tensors["blk.0.attn_q.weight.lora_a"].reshape(a_q.shape), a_q)  # A: the input side
    b_v = layer.self_attn.v_proj.lora_B["default"].weight.detach().numpy()
    assert np.array_equal(tensors["blk.0.attn_v.weight.lora_b"].reshape(b_v.shape), b_v)
    assert "blk.0.ffn_down.weight.lora_a" in tensors
    with pytest.raises(ValueError, match="only llama"):
        (tmp_path / "other").mkdir()
        (tmp_path / "other" / "config.json").write_text('{"model_type": "gpt2"}')
        export_lora_gguf(tmp_path / "adapter", tmp_path / "other", tmp_path / "x.gguf")


def test_the_engine_command_loads_a_lora_unapplied() -> None:
    native = engine_command("m.gguf", 8080, binary="/bin/llama-server", lora="a.gguf")
    # at scale 0: "--lora F --lora-init-without-apply" gives requests without a "lora" field scale 1
    assert native[native.index("--lora-scaled") + 1] == "a.gguf:0" and "--lora" not in native
    assert native[native.index("--cache-ram") + 1] == "0"  # it restores prefixes whatever scales computed them
    assert "--lora-scaled" not in engine_command("m.gguf", 8080, binary="/bin/llama-server")


def test_add_recall_tokens_is_what_makes_a_tokenizer_servable() -> None:
    model, tokenizer = tiny_model("llama")
    assert RECALL_TOKEN in tokenizer.get_vocab()
    fresh = tiny_tokenizer()
    add_recall_tokens(model, fresh)
    ServedRecallGenerator("http://127.0.0.1:1", fresh, context_window=64)


class _ScriptedClient(EngineClient):
    """An engine that answers each ``/completion`` with the next scripted reply, keeping the bodies."""

    def __init__(self, *replies: list[int]) -> None:
        super().__init__("http://127.0.0.1:1")
        self.replies = list(replies)
        self.bodies: list[dict] = []

    def complete(self, prompt, options, on_tokens=None, until=None):  # type: ignore[override]
        from recall_core.serving.client import Completion

        self.bodies.append(dict(options))
        tokens = self.replies.pop(0)
        if on_tokens is not None:
            on_tokens(tokens, [])
        return Completion(tokens=tokens, stop_type="eos", prompt_tokens=len(prompt))


@pytest.mark.parametrize("policy", ["explicit", "off"])
def test_served_policies_that_forbid_the_models_recall_mask_it(policy: str) -> None:
    """As in process (tests/unit/test_engine_policies.py): under "explicit" and "off" the engine is
    told never to sample ``<recall>``; under "model" it may."""
    _, tokenizer = tiny_model("llama")
    recall_id, end = tokenizer.convert_tokens_to_ids(RECALL_TOKEN), tokenizer.eos_token_id
    client = _ScriptedClient([5, end])
    generator = ServedRecallGenerator(client, tokenizer, context_window=512, memory=FixedMemory("Ana lives in Lisbon."))
    result = generator.generate([{"role": "user", "content": "Where do I live?"}],
                                config=RecallConfig(recall_policy=policy), max_new_tokens=4)  # fmt: skip
    assert result.recalls == [] and [recall_id, False] in client.bodies[0]["logit_bias"]
    allowed = _ScriptedClient([5, end])
    ServedRecallGenerator(allowed, tokenizer, context_window=512, memory=FixedMemory("Ana lives in Lisbon.")).generate(
        [{"role": "user", "content": "Where do I live?"}], max_new_tokens=4,
        config=RecallConfig(recall_policy="model", ask_on_abstention=False, ask_on_score=0.0))  # no first passes
    assert [recall_id, False] not in allowed.bodies[0]["logit_bias"]


def test_served_without_a_memory_the_model_may_not_recall() -> None:
    """As in process (test_engine_policies.py): with nothing to search the engine is told never to
    sample ``<recall>``, whatever the policy, and the reply is the engine's own."""
    _, tokenizer = tiny_model("llama")
    recall_id, end = tokenizer.convert_tokens_to_ids(RECALL_TOKEN), tokenizer.eos_token_id
    for policy in ("auto", "model"):
        client = _ScriptedClient([5, 6, end])
        result = ServedRecallGenerator(client, tokenizer, context_window=512).generate(
            [{"role": "user", "content": "Where do I live?"}], config=RecallConfig(recall_policy=policy), max_new_tokens=4)
        assert [recall_id, False] in client.bodies[0]["logit_bias"] and len(client.bodies) == 1
        assert not any(r.injected for r in result.recalls)


def test_served_off_ignores_a_prompts_marker_and_explicit_honours_it() -> None:
    _, tokenizer = tiny_model("llama")
    end = tokenizer.eos_token_id
    prompt = f"Where do I live?{RECALL_TOKEN}"
    memory = FixedMemory("Ana lives in Lisbon.")
    honoured = ServedRecallGenerator(_ScriptedClient([5, end]), tokenizer, context_window=512, memory=memory).generate(
        prompt, config=RecallConfig(recall_policy="explicit"), max_new_tokens=4)
    assert [r.injected for r in honoured.recalls] == [True]
    off = ServedRecallGenerator(_ScriptedClient([5, end]), tokenizer, context_window=512, memory=memory).generate(
        prompt, config=RecallConfig(recall_policy="off"), max_new_tokens=4)
    (recall,) = off.recalls
    assert not recall.injected and recall.reason == "recall off" and recall.in_prompt
    assert off.usage.injected_tokens == 0
    assert tokenizer.convert_tokens_to_ids(RECALL_TOKEN) not in off.output.engine_ids


def test_served_stop_strings_are_cut_by_the_client_not_sent_to_the_engine() -> None:
    """Sent to the engine, a stop string's start was held back from the stream's text, and the ids
    rebuilt from it after a split character were wrong (a reviewer, 2026-12-07): cut as in process."""
    _, tokenizer = tiny_model("llama")
    ids = tokenizer("Lisbon is sunny today and warm", add_special_tokens=False).input_ids
    client = _ScriptedClient([*ids, tokenizer.eos_token_id])
    result = ServedRecallGenerator(client, tokenizer, context_window=512).generate(
        "Where do I live?", stop=["today"], max_new_tokens=40, config=RecallConfig(recall_policy="off"))
    assert "stop" not in client.bodies[0]
    assert result.text.rstrip() == "Lisbon is sunny" and result.finish_reason == "stop"


def test_served_notes_that_leave_the_reply_no_room_are_not_sent_as_in_process() -> None:
    """In process notes that with the whole reply would pass the window are not injected (NO_ROOM);
    until 2026-12-07 the served loop sent them and the engine cut the reply at its slot's end (a reviewer)."""
    from recall_core.decoding.budget import NO_ROOM

    _, tokenizer = tiny_model("llama")
    end = tokenizer.eos_token_id
    prompt, memory = f"Where do I live?{RECALL_TOKEN}", FixedMemory("Ana lives in Lisbon.")
    fits = ServedRecallGenerator(_ScriptedClient([5, end]), tokenizer, context_window=512, memory=memory).generate(
        prompt, config=RecallConfig(recall_policy="explicit"), max_new_tokens=4)
    (recall,) = fits.recalls
    assert recall.injected and len(tokenizer(prompt).input_ids) + recall.length + 400 > 512
    tight = ServedRecallGenerator(_ScriptedClient([5, end]), tokenizer, context_window=512, memory=memory).generate(
        prompt, config=RecallConfig(recall_policy="explicit"), max_new_tokens=400)
    (recall,) = tight.recalls
    assert not recall.injected and recall.reason == NO_ROOM and tight.usage.injected_tokens == 0


def test_served_room_counts_a_prompt_s_notes_once() -> None:
    """A model-written recall after a prompt's notes counted those notes twice (the engine's ids hold
    them, and they were still pending), and was skipped as NO_ROOM where it fit (a second reviewer)."""
    from recall_core.decoding.budget import NO_ROOM

    _, tokenizer = tiny_model("llama")
    recall_id, end = tokenizer.convert_tokens_to_ids(RECALL_TOKEN), tokenizer.eos_token_id
    config = RecallConfig(recall_policy="model", max_recalls=3, ask_on_abstention=False, ask_on_score=0.0)

    def run(window: int):
        from recall_core.serving.client import Completion
        from tests.helpers.engines import ScriptedEngine

        client = ScriptedEngine(Completion(tokens=[5, recall_id], stop_type="eos"), Completion(tokens=[6, end], stop_type="eos"))
        result = ServedRecallGenerator(client, tokenizer, context_window=window, memory=FixedMemory("Ana lives in Lisbon.")
                                       ).generate(f"Where do I live?{RECALL_TOKEN}", config=config, max_new_tokens=20)  # fmt: skip
        return result, client

    result, client = run(4096)
    assert [r.injected for r in result.recalls] == [True, True]
    needed = len(client.bodies[1]["prompt"]) + client.bodies[1]["n_predict"]
    assert [r.injected for r in run(needed)[0].recalls] == [True, True]
    assert [r.reason for r in run(needed - 1)[0].recalls] == [None, NO_ROOM]


@pytest.mark.parametrize(("p", "recalled"), [(0.4, False), (0.7, True)])
def test_served_recall_below_the_threshold_is_taken_back_as_in_process(p: float, recalled: bool) -> None:
    """The engine stops at the ``<recall>`` it sampled (with its probability from ``n_probs``); under
    ``recall_threshold`` the loop drops it and asks for the rest of the reply with ``<recall>``
    masked (declined once, masked to the end, as in process)."""
    import math

    from recall_core.serving.client import Completion

    _, tokenizer = tiny_model("llama")
    recall_id, end = tokenizer.convert_tokens_to_ids(RECALL_TOKEN), tokenizer.eos_token_id
    stopped = Completion(tokens=[recall_id], stop_type="eos", logprobs=[{recall_id: math.log(p)}])
    if recalled:
        script = [stopped, Completion(tokens=[7, end], stop_type="eos", logprobs=[{7: -0.1}, {end: -0.1}])]
    else:
        script = [stopped, Completion(tokens=[7, 8, end], stop_type="eos", logprobs=[{7: -0.5}, {8: -0.1}, {end: -0.1}])]
    client = ScriptedEngine(*script)
    generator = ServedRecallGenerator(client, tokenizer, context_window=512, memory=FixedMemory("Ana lives in Lisbon."))
    # ask_on_abstention off: with it, "model" first makes the one-token check request (test_engine_ask.py);
    # ask_on_score off: FixedMemory's candidate scores 1.0, which would open the reply with <recall>
    result = generator.generate([{"role": "user", "content": "Where do I live?"}],
                                config=RecallConfig(recall_policy="model", ask_on_abstention=False, ask_on_score=0.0),
                                max_new_tokens=6)  # fmt: skip
    assert [r.trigger for r in result.recalls] == (["model"] if recalled else [])
    if recalled:
        assert result.sequences[0, result.recalls[0].position - 1] == recall_id
        assert result.sequences[0, -2:].tolist() == [7, end] and len(client.bodies) == 2
    else:
        reply = result.sequences[0, -3:].tolist()
        first_prompt = client.bodies[0]["prompt"]
        # The second request is the same prompt and the whole budget, <recall> masked.
        assert client.bodies[1]["prompt"] == first_prompt and client.bodies[1]["n_predict"] == 6
        assert [recall_id, False] in client.bodies[1]["logit_bias"] and len(client.bodies) == 2
        assert reply == [7, 8, end] and recall_id not in result.output.engine_ids
        assert result.usage.generated_tokens == 3


@pytest.mark.parametrize(("config", "found", "recalled"),
                         [(RecallConfig(), False, True), (RecallConfig(auto_recall_threshold=0.5), False, False),
                          (RecallConfig(), True, False), (RecallConfig(recall_threshold=0.3), True, True)])  # fmt: skip
def test_served_auto_judges_the_models_own_recall_by_auto_recall_threshold(config: RecallConfig, found: bool,
                                                                           recalled: bool) -> None:  # fmt: skip
    """Under ``"auto"``, when the prompt's recall found nothing, a ``<recall>`` the engine samples at
    0.4 runs by default (``auto_recall_threshold`` 0) and is taken back at 0.5; after notes,
    ``recall_threshold`` judges it: as in process."""
    import math

    from recall_core.serving.client import Completion

    _, tokenizer = tiny_model("llama")
    recall_id, end = tokenizer.convert_tokens_to_ids(RECALL_TOKEN), tokenizer.eos_token_id
    stopped = Completion(tokens=[recall_id], stop_type="eos", logprobs=[{recall_id: math.log(0.4)}])
    client = ScriptedEngine(stopped, Completion(tokens=[7, end], stop_type="eos", logprobs=[{7: -0.1}, {end: -0.1}]))
    memory = FixedMemory("Ana lives in Lisbon.") if found else ListMemory({})
    generator = ServedRecallGenerator(client, tokenizer, context_window=512, memory=memory)
    result = generator.generate([{"role": "user", "content": "Where do I live?"}], config=config, max_new_tokens=6)
    assert (result.recalls[0].trigger, result.recalls[0].memory_id is not None) == ("prompt", found)
    assert ("model" in [r.trigger for r in result.recalls]) is recalled
    assert ([recall_id, False] in client.bodies[1]["logit_bias"]) is not recalled  # taken back: masked from then on


@pytest.mark.parametrize(("on_statements", "text", "masked"),
                         [(True, "I started a new job today.", False), (False, "I started a new job today.", True),
                          (False, "Where do I live?", False)])  # fmt: skip
def test_served_auto_masks_the_models_own_recall_on_a_new_users_news(on_statements: bool, text: str,
                                                                     masked: bool) -> None:  # fmt: skip
    """``own_recall_on_statements`` off: to a message that asks nothing, after a prompt recall that
    found nothing, the engine is never let sample ``<recall>`` (masked from the first request), as
    in process; a question is asked as before."""
    from recall_core.serving.client import Completion

    _, tokenizer = tiny_model("llama")
    recall_id, end = tokenizer.convert_tokens_to_ids(RECALL_TOKEN), tokenizer.eos_token_id
    client = ScriptedEngine(Completion(tokens=[7, end], stop_type="eos", logprobs=[{7: -0.1}, {end: -0.1}]))
    generator = ServedRecallGenerator(client, tokenizer, context_window=512, memory=ListMemory({}))
    config = RecallConfig(own_recall_on_statements=on_statements, ask_on_statements=False)
    result = generator.generate([{"role": "user", "content": text}], config=config, max_new_tokens=6)
    assert [r.trigger for r in result.recalls] == ["prompt"]
    assert ([recall_id, False] in client.bodies[0]["logit_bias"]) is masked


@pytest.mark.parametrize(("p", "masked"), [(0.3, True), (0.7, False)])
def test_served_abstention_after_notes_is_checked_as_in_process(p: float, masked: bool) -> None:
    """The first token after the notes comes with its probability (``n_probs``): a weak "I" of
    "I don't know." drops that request before anything is shown, and the step is asked again with
    the opening masked (``n_predict`` 1), then the reply goes on; a confident one streams as usual
    (tests/unit/test_engine_abstain.py in process)."""
    import math

    from recall_core.decoding.abstain import abstention_opening
    from recall_core.serving.client import Completion

    _, tokenizer = tiny_model("llama")
    opening, end = abstention_opening(tokenizer), tokenizer.eos_token_id
    first = Completion(tokens=[opening, 8, end], stop_type="eos", logprobs=[{opening: math.log(p)}, {8: -0.1}, {end: -0.1}])
    script = [first]
    if masked:
        script += [Completion(tokens=[7], stop_type="limit", logprobs=[{7: -0.5}]),
                   Completion(tokens=[8, end], stop_type="eos", logprobs=[{8: -0.1}, {end: -0.1}])]  # fmt: skip
    client = ScriptedEngine(*script)
    shown: list[int] = []

    class Shown:
        def put(self, ids):
            shown.extend(ids.flatten().tolist())

        def end(self):
            pass

    generator = ServedRecallGenerator(client, tokenizer, context_window=512, memory=FixedMemory("Ana lives in Lisbon."))
    result = generator.generate([{"role": "user", "content": "Where do I live?"}], streamer=Shown(),
                                config=RecallConfig(abstain_threshold=0.5), max_new_tokens=6)  # fmt: skip
    assert [r.memory_id for r in result.recalls] == ["m0"]
    assert client.bodies[0]["n_predict"] == 6  # the whole reply is asked for at once
    reply = [7, 8, end] if masked else [opening, 8, end]
    assert result.sequences[0, -3:].tolist() == reply and shown[-3:] == reply
    if masked:  # the same ids again, the opening masked, one token; the weak "I" was never shown
        assert client.bodies[1]["prompt"] == client.bodies[0]["prompt"] and client.bodies[1]["n_predict"] == 1
        assert [opening, False] in client.bodies[1]["logit_bias"]
        assert [opening, False] not in client.bodies[2]["logit_bias"] and client.bodies[2]["n_predict"] == 5
        assert opening not in shown[-4:] and opening not in result.output.engine_ids[-3:]
        assert [r.stop_type for r in result.output.dropped] == ["abstained"]
        assert [r.stop_type for r in result.output.requests] == ["limit", "eos"]
    else:
        assert len(client.bodies) == 1 and result.output.dropped == []
    assert result.usage.generated_tokens == 3


def test_served_abstention_is_checked_once_and_not_without_notes() -> None:
    """Only the first token after notes is checked (a weak "I" later streams), and a call without
    notes is never checked: one request each."""
    import math

    from recall_core.decoding.abstain import abstention_opening
    from recall_core.serving.client import Completion

    _, tokenizer = tiny_model("llama")
    opening, end = abstention_opening(tokenizer), tokenizer.eos_token_id
    later = Completion(tokens=[8, opening, end], stop_type="eos", logprobs=[{8: -0.1}, {opening: math.log(0.2)}, {end: -0.1}])
    weak = Completion(tokens=[opening, end], stop_type="eos", logprobs=[{opening: math.log(0.2)}, {end: -0.1}])
    for reply, memory in [(later, FixedMemory("Ana lives in Lisbon.")), (weak, None)]:
        client = ScriptedEngine(reply)
        result = ServedRecallGenerator(client, tokenizer, context_window=512, memory=memory).generate(
            [{"role": "user", "content": "Where do I live?"}], config=RecallConfig(abstain_threshold=0.5), max_new_tokens=6)
        assert len(client.bodies) == 1 and result.sequences[0, -len(reply.tokens) :].tolist() == reply.tokens


def test_a_continuation_after_recall_is_never_pinned_to_a_slot() -> None:
    """Pinned continuations (``id_slot``, the slot the prefix ran on) came back with another user's
    name in the reply under concurrent users on a real llama.cpp engine (a reviewer, 2026-12-07: 2 to
    4 of 48 replies; none of 112 unpinned): no request names a slot."""
    import math

    from recall_core.serving.client import Completion

    _, tokenizer = tiny_model("llama")
    recall_id, end = tokenizer.convert_tokens_to_ids(RECALL_TOKEN), tokenizer.eos_token_id
    client = ScriptedEngine(Completion(tokens=[recall_id], stop_type="eos", logprobs=[{recall_id: math.log(0.9)}], slot=3),
                            Completion(tokens=[7, end], stop_type="eos", logprobs=[{7: -0.1}, {end: -0.1}], slot=3))  # fmt: skip
    generator = ServedRecallGenerator(client, tokenizer, context_window=512, memory=FixedMemory("Ana lives in Lisbon."))
    result = generator.generate([{"role": "user", "content": "Where do I live?"}],
                                config=RecallConfig(recall_policy="model", ask_on_abstention=False, ask_on_score=0.0),
                                max_new_tokens=6)  # fmt: skip
    assert [r.trigger for r in result.recalls] == ["model"] and len(client.bodies) == 2
    assert not any("id_slot" in body for body in client.bodies), client.bodies


def _streamed(*lines: bytes) -> bytes:
    """An HTTP 200 event stream of ``lines`` (each sent as one chunk), not ended."""
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
    return head + b"".join(hex(len(line))[2:].encode() + b"\r\n" + line + b"\r\n" for line in lines)


@pytest.mark.parametrize(
    ("reply", "match"),
    [(_streamed(b'error: {"code": 400, "message": "the request exceeds the available context size"}\n\n'),
      "failed the request: .*exceeds the available context size"),
     (b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 41\r\n\r\n{"content": "hi", "tokens": [5], "stop": 1}',
      "answered with no event stream"),
     (_streamed(b'data: {"tokens": [null], "stop": false}\n\n'), r"sent an event of a shape recall does not read \(TypeError"),
     (_streamed(b'data: {"tokens": [5], "stop": true, "tokens_evaluated": "many"}\n\n'), "shape recall does not read")],
)  # fmt: skip
def test_what_an_engine_says_in_a_shape_not_expected_is_an_engine_error_with_its_words(reply: bytes, match: str) -> None:
    """llama.cpp's own ``error:`` events, a reply that is no event stream and events of other shapes
    (until 2026-12-07: "closed the reply before it finished", or a ``TypeError`` from deep inside)."""
    peer = _Peer(reply, close=True)
    try:
        with pytest.raises(EngineError, match=match):
            EngineClient(f"http://127.0.0.1:{peer.port}", timeout=2.0).complete([1, 2, 3], {"n_predict": 4})
    finally:
        peer.stop()


def test_an_engine_that_only_keeps_the_stream_alive_fails_within_the_timeout() -> None:
    """Comment lines carry no event: the timeout counts from the last event (until 2026-12-07 a
    keep-alive every second held the call for good)."""
    peer = _Peer(_streamed(b": ping\n\n"), close=False)

    def ping() -> None:  # a keep-alive comment every 0.3 s until the peer is stopped
        while True:
            time.sleep(0.3)
            try:
                for conn in peer.conns:
                    conn.sendall(b"8\r\n: ping\n\n\r\n")
            except OSError:
                return

    threading.Thread(target=ping, daemon=True).start()
    try:
        started = time.monotonic()
        with pytest.raises(EngineError, match="sent no event within 1s") as raised:
            EngineClient(f"http://127.0.0.1:{peer.port}", timeout=1.0).complete([1, 2, 3], {"n_predict": 4})
        assert raised.value.hung and time.monotonic() - started < 3
    finally:
        peer.stop()


def test_an_engine_still_loading_leaves_no_context_window_guessed() -> None:
    """``/props`` answered 503 (llama.cpp while it loads) is an ``EngineError``, and so are props that
    name no ``n_ctx``: no window is guessed and kept (until 2026-12-07 it was 2048 for good)."""
    busy = b'HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: 30\r\n\r\n{"error": {"message": "load"}}'
    peer = _Peer(busy, close=True)
    try:
        with pytest.raises(EngineError, match="503"):
            EngineClient(f"http://127.0.0.1:{peer.port}", timeout=2.0).props()
    finally:
        peer.stop()

    class Props(_ScriptedClient):
        answer: dict = {}

        def props(self):  # type: ignore[override]
            return self.answer

    _, tokenizer = tiny_model("llama")
    client = Props()
    generator = ServedRecallGenerator(client, tokenizer)
    with pytest.raises(EngineError, match=r"does not say its context window.*context_window="):
        _ = generator.context_window
    client.answer = {"default_generation_settings": {"n_ctx": 4096}}
    assert generator.context_window == 4096


def test_a_hung_engine_fails_within_one_timeout_not_two() -> None:
    """The adapters' listing asked first: a hung engine fails the call there (until 2026-12-07 the
    listing's timeout was let go and the completion waited a second one)."""
    peer = _Peer(None, close=False)
    try:
        _, tokenizer = tiny_model("llama")
        generator = ServedRecallGenerator(f"http://127.0.0.1:{peer.port}", tokenizer, context_window=512, timeout=1.0)
        started = time.monotonic()
        with pytest.raises(EngineError, match="no answer within 1s"):
            generator.generate([{"role": "user", "content": "hi"}], memory=None, max_new_tokens=2)
        assert time.monotonic() - started < 1.8
    finally:
        peer.stop()


def test_a_session_over_a_served_backend_is_refused_by_name() -> None:
    from recall_core import RecallSession

    _, tokenizer = tiny_model("llama")
    generator = ServedRecallGenerator("http://127.0.0.1:1", tokenizer, context_window=512)
    for bounds in ({}, {"max_cache_tokens": 256}):
        with pytest.raises(ValueError, match="in-process RecallGenerator.*prefix cache is the session"):
            RecallSession(generator, **bounds)
