"""The served backend's client against a fake llama.cpp server that streams as the real one does
(real sockets, server-sent events in its format): ids the stream leaves out mid-UTF-8-character,
the sampled id's own log-probability, ``max_time``, a reply the engine's context cut, the ids that
would not fit its slot, and the options checked before anything is sent."""

from __future__ import annotations

import json
import math
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from transformers import GenerationConfig

from recall_core import RecallConfig
from recall_core.serving import EngineClient, EngineError, ServedRecallGenerator
from recall_core.serving.client import Completion
from recall_core.serving.loop import sampling_options
from recall_core.serving.pieces import Pieces
from recall_core.tokens import RECALL_TOKEN
from tests.helpers.engines import ScriptedEngine
from tests.helpers.memories import FixedMemory
from tests.helpers.tiny import tiny_model


def _incomplete(data: bytes) -> bool:
    """llama.cpp's ``validate_utf8``: does the text end inside a multi-byte character?"""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if (byte & 0xE0 == 0xC0 and back < 2) or (byte & 0xF0 == 0xE0 and back < 3) or (byte & 0xF8 == 0xF0 and back < 4):
            return True
    return False


class FakeLlamaServer:
    """``/completion`` as llama.cpp's server answers it (tools/server/server.cpp, ``process_token``):
    one event per id whose text is complete, none for an id that leaves it mid-character (the next
    event's ``content`` holds the completed text, its ``tokens`` its own id, ``tokens_predicted`` the
    count so far), probabilities with the sampled id beside ``top_logprobs``, and a last event with
    no ids. Each scripted reply is ``(ids, logprobs, top, stop_type)``: ``top`` is the one
    ``top_logprobs`` entry per step (default: the id itself). A non-streamed request goes on from
    the last streamed one's prompt with its reply's next ids."""

    def __init__(self, tokenizer: Any, *replies: tuple[list[int], list[float] | None, list[int] | None, str],
                 n_ctx: int = 512, delay: float = 0.0, stall_after: int | list[int | None] | None = None) -> None:  # fmt: skip
        self.pieces = Pieces(tokenizer)
        self.replies, self.bodies, self.delay = list(replies), [], delay
        # a stalled engine: silent after so many events, until closed (a list: per streamed request)
        self.stall_after, self.released, self.streamed = stall_after, threading.Event(), 0
        self.last: tuple[list[int], list[int]] = ([], [])
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _json(self, value: Any) -> None:
                data = json.dumps(value).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                self._json([] if self.path == "/lora-adapters" else {"default_generation_settings": {"n_ctx": n_ctx}})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.bodies.append(body)
                if not body.get("stream"):
                    prompt, ids = fake.last
                    start = len(body["prompt"]) - len(prompt)
                    return self._json({"tokens": ids[start : start + body["n_predict"]], "stop": True})
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                try:
                    stall = fake.stall_after
                    if isinstance(stall, list):
                        stall = stall[fake.streamed] if fake.streamed < len(stall) else None
                    fake.streamed += 1
                    for n, event in enumerate(fake.events(body)):
                        if n == stall:
                            fake.released.wait(30)
                            return
                        data = f"data: {json.dumps(event)}\n\n".encode()
                        self.wfile.write(hex(len(data))[2:].encode() + b"\r\n" + data + b"\r\n")
                        self.wfile.flush()
                        time.sleep(fake.delay)
                    self.wfile.write(b"0\r\n\r\n")
                except (BrokenPipeError, ConnectionResetError):  # the client left: the request stops
                    pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def events(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        ids, logprobs, top, stop_type = self.replies.pop(0)
        ids = ids[: body["n_predict"]]
        self.last = (body["prompt"], ids)
        text, sent, events = b"", 0, []
        for n, token in enumerate(ids, 1):
            text += self.pieces.of([token])
            if _incomplete(text):
                continue  # no event: the id is only counted
            chunk, sent = text[sent:], len(text)
            lp = logprobs[n - 1] if logprobs else -0.1
            listed = top[n - 1] if top else token
            step = {"id": token, "token": chunk.decode("utf-8", "replace"), "bytes": list(chunk), "logprob": lp,
                    "top_logprobs": [{"id": listed, "token": "", "bytes": list(self.pieces.of([listed])),
                                      "logprob": lp if listed == token else -0.5}]}  # fmt: skip
            events.append({"index": 0, "content": chunk.decode("utf-8", "replace"), "tokens": [token], "stop": False,
                           "id_slot": -1, "tokens_predicted": n, "tokens_evaluated": len(body["prompt"]),
                           # as llama.cpp: the probabilities (and the piece's bytes) only when asked for
                           **({"completion_probabilities": [step]} if body.get("n_probs", 0) > 0 else {})})  # fmt: skip
        events.append({"index": 0, "content": "", "tokens": [], "id_slot": 0, "stop": True, "stop_type": stop_type,
                       "stopping_word": "", "tokens_predicted": len(ids), "tokens_evaluated": len(body["prompt"]),
                       "timings": {"cache_n": 0, "prompt_n": len(body["prompt"])}})  # fmt: skip
        return events

    def close(self) -> None:
        self.released.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def tokenizer() -> Any:
    return tiny_model("llama")[1]


MESSAGES = [{"role": "user", "content": "Say hello."}]
TEXT = "Olá! 😊 東京, café 🎉"


def test_ids_the_stream_leaves_out_mid_character_are_put_back(tokenizer) -> None:
    """An emoji, CJK and an accented letter, each split over byte-level ids: the reply's ids, text,
    count and finish are the engine's own; the ids the stream left out have no probability."""
    end = tokenizer.eos_token_id
    reply = tokenizer(TEXT, add_special_tokens=False).input_ids + [end]
    fake = FakeLlamaServer(tokenizer, (reply, None, None, "eos"))
    try:
        result = ServedRecallGenerator(fake.url, tokenizer).generate(MESSAGES, memory=None, max_new_tokens=40)
    finally:
        fake.close()
    assert result.sequences[0, -len(reply) :].tolist() == reply and result.text == TEXT
    assert (result.usage.generated_tokens, result.finish_reason) == (len(reply), "stop")
    (request,) = result.output.requests
    assert request.tokens == reply and len(request.logprobs) == len(reply)
    skipped = [not p for p in request.logprobs]
    assert sum(skipped) == len(reply) - len(fake_events(tokenizer, reply)) > 5  # the emoji alone leave out 6
    assert all(request.logprobs[i] == {token: -0.1} for i, token in enumerate(reply) if not skipped[i])


def fake_events(tokenizer: Any, reply: list[int]) -> list[dict[str, Any]]:
    """The events the fake engine sends with ids for ``reply`` (one per id that completes the text)."""
    fake = FakeLlamaServer(tokenizer, (reply, None, None, "eos"))
    try:
        return [e for e in fake.events({"prompt": [1], "n_predict": len(reply)}) if e["tokens"]]
    finally:
        fake.close()


def test_a_reply_cut_mid_character_asks_for_its_last_ids_again(tokenizer) -> None:
    """``max_new_tokens`` ends the reply inside the emoji: the last event has no ids, so the ids after
    the last that was sent are asked for once more (not streamed, the same slot), as in process."""
    reply = tokenizer(TEXT, add_special_tokens=False).input_ids
    cut = len(tokenizer("Olá! ", add_special_tokens=False).input_ids) + 2  # two of the emoji's four bytes
    fake = FakeLlamaServer(tokenizer, (reply, None, None, "limit"))
    try:
        result = ServedRecallGenerator(fake.url, tokenizer).generate(MESSAGES, memory=None, max_new_tokens=cut)
    finally:
        fake.close()
    assert result.sequences[0, -cut:].tolist() == reply[:cut]
    assert (result.usage.generated_tokens, result.finish_reason) == (cut, "length")
    assert result.text == tokenizer.decode(reply[:cut])
    again = fake.bodies[1]
    assert again["stream"] is False and again["n_predict"] == 2 and "id_slot" not in again  # never pinned
    assert again["prompt"] == fake.bodies[0]["prompt"] + reply[: cut - 2]


def test_ids_split_unlike_the_tokenizer_keep_the_text_and_the_count(tokenizer) -> None:
    """A lead byte the next id does not continue (the tiny random model writes such): the completed
    text is not what the tokenizer would write, so the bytes left out are split into the vocabulary's
    pieces, as many as the engine counted."""
    pieces = Pieces(tokenizer)
    lead = pieces.ids[b"\xc0"]
    word = tokenizer(" is", add_special_tokens=False).input_ids
    reply = [*tokenizer("ok", add_special_tokens=False).input_ids, lead, *word, lead, lead, *word]
    fake = FakeLlamaServer(tokenizer, (reply, None, None, "limit"))
    try:
        result = ServedRecallGenerator(fake.url, tokenizer).generate(MESSAGES, memory=None, max_new_tokens=len(reply))
    finally:
        fake.close()
    assert result.sequences[0, -len(reply) :].tolist() == reply
    assert result.usage.generated_tokens == len(reply) and result.finish_reason == "length"


def test_the_sampled_ids_own_probability_is_read_beside_the_top_ones(tokenizer) -> None:
    """Under sampling llama.cpp lists the most likely id in ``top_logprobs`` (``n_probs`` 1) and the
    sampled one's ``logprob`` beside it: a ``<recall>`` sampled at 0.02 is judged by
    ``recall_threshold`` (taken back, the reply asked again with it masked), as in process."""
    recall_id, end = tokenizer.convert_tokens_to_ids(RECALL_TOKEN), tokenizer.eos_token_id
    fake = FakeLlamaServer(tokenizer, ([recall_id], [math.log(0.02)], [5], "eos"), ([7, end], None, None, "eos"))
    try:
        generator = ServedRecallGenerator(fake.url, tokenizer, memory=FixedMemory("Ana lives in Lisbon."))
        result = generator.generate([{"role": "user", "content": "Where do I live?"}], do_sample=True, seed=1,
                                    config=RecallConfig(recall_policy="model", ask_on_abstention=False,
                                                        ask_on_score=0.0), max_new_tokens=6)  # fmt: skip
    finally:
        fake.close()
    assert result.recalls == [] and [recall_id, False] in fake.bodies[1]["logit_bias"]
    assert result.output.requests[0].logprobs == [{5: -0.5, recall_id: math.log(0.02)}]


def test_max_time_ends_the_reply_as_in_process(tokenizer) -> None:
    """llama.cpp's ``t_max_predict_ms`` waits for a newline; the client stops reading at ``max_time``
    (the engine stops the request) and says ``"time"``, as transformers' ``MaxTimeCriteria``."""
    fake = FakeLlamaServer(tokenizer, ([5] * 40, None, None, "limit"), delay=0.05)
    try:
        started = time.perf_counter()
        result = ServedRecallGenerator(fake.url, tokenizer).generate(MESSAGES, memory=None, max_new_tokens=40,
                                                                     max_time=0.3)  # fmt: skip
        took = time.perf_counter() - started
    finally:
        fake.close()
    assert result.finish_reason == "time" and 1 <= result.usage.generated_tokens < 20 and took < 1.5


def test_max_time_ends_a_reply_the_engine_stalls_in(tokenizer) -> None:
    """An engine silent mid-reply: ``max_time`` ends the reply with the ids that came, within about
    ``max_time`` (until 2026-12-08 the call waited for the client's timeout and failed as hung)."""
    fake = FakeLlamaServer(tokenizer, ([5, 6, 7, 8, 9, 10], None, None, "limit"), stall_after=3)
    try:
        started = time.perf_counter()
        generator = ServedRecallGenerator(EngineClient(fake.url, timeout=10.0), tokenizer)
        result = generator.generate(MESSAGES, memory=None, max_new_tokens=6, max_time=0.5)
        took = time.perf_counter() - started
    finally:
        fake.close()
    assert result.finish_reason == "time" and result.usage.generated_tokens == 3 and took < 2.5
    assert result.output.requests[0].tokens == [5, 6, 7]


def test_max_time_ends_a_reply_whose_continuation_after_a_recall_stalls(tokenizer) -> None:
    """The reply has ids when the engine goes silent at the start of its continuation after a recall:
    ``max_time`` ends it with them (until 2026-12-08 only the request's own ids counted, and the call
    failed as hung after the client's timeout, the reply lost: a reviewer)."""
    recall_id, end = tokenizer.convert_tokens_to_ids(RECALL_TOKEN), tokenizer.eos_token_id
    fake = FakeLlamaServer(tokenizer, ([7, 8, 9, recall_id], None, None, "eos"), ([10, 11, end], None, None, "eos"),
                           stall_after=[None, 0])  # fmt: skip
    try:
        generator = ServedRecallGenerator(EngineClient(fake.url, timeout=10.0), tokenizer, memory=FixedMemory("Ana lives in Lisbon."))
        started = time.perf_counter()
        result = generator.generate(MESSAGES, max_new_tokens=20, max_time=0.5,
                                    config=RecallConfig(recall_policy="model", ask_on_abstention=False, ask_on_score=0.0))
        took = time.perf_counter() - started
    finally:
        fake.close()
    assert result.finish_reason == "time" and len(result.recalls) == 1 and len(fake.bodies) == 2 and took < 2.5


def test_a_constrained_reply_whose_engine_stalls_is_hung_not_cut_at_its_own_time_bound(tokenizer, monkeypatch) -> None:
    """A constrained reply's ``max_time`` (``CONSTRAINED_MAX_TIME``, 60 s) is a bound the caller did not
    ask for: an engine silent past it fails as hung, as before 2026-12-08, not as a cut JSON with
    ``"time"`` (a reviewer). The caller's own ``max_time`` is watched."""
    import recall_core.serving.generator as served

    monkeypatch.setattr(served, "CONSTRAINED_MAX_TIME", 0.3)  # stands for 60 s against the client's timeout
    ids = tokenizer('{"name": "Ana", "city": "Lisbon"}', add_special_tokens=False).input_ids
    schema = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
    form = {"type": "json_schema", "json_schema": {"name": "p", "schema": schema}}
    for max_time in (None, 0.3):
        fake = FakeLlamaServer(tokenizer, (ids, None, None, "eos"), stall_after=4)
        try:
            generator = ServedRecallGenerator(EngineClient(fake.url, timeout=1.5), tokenizer)
            if max_time is None:
                with pytest.raises(EngineError, match="no answer within") as raised:
                    generator.generate(MESSAGES, memory=None, max_new_tokens=40, response_format=form)
                assert raised.value.hung
            else:
                result = generator.generate(MESSAGES, memory=None, max_new_tokens=40, response_format=form, max_time=max_time)
                assert result.finish_reason == "time"
        finally:
            fake.close()


def test_a_stalled_engine_before_any_id_is_still_an_engine_error_under_max_time(tokenizer) -> None:
    """``max_time`` counts only once an id has come, as transformers gives the first id that comes:
    an engine silent from the start fails as hung after the client's timeout, not as an empty reply."""
    fake = FakeLlamaServer(tokenizer, ([5, 6], None, None, "limit"), stall_after=0)
    try:
        generator = ServedRecallGenerator(EngineClient(fake.url, timeout=1.0), tokenizer)
        with pytest.raises(EngineError, match="no answer within 1s") as raised:
            generator.generate(MESSAGES, memory=None, max_new_tokens=2, max_time=0.2)
    finally:
        fake.close()
    assert raised.value.hung


def test_leaving_a_stream_of_a_stalled_engine_returns_at_once(tokenizer) -> None:
    """A consumer that stops reading a stream whose engine went silent is not held for the client's
    timeout (until 2026-12-08 ``close()`` waited for it: the cancel was read only when an id came)."""
    fake = FakeLlamaServer(tokenizer, ([5, 6, 7, 8, 9, 10], None, None, "limit"), stall_after=2)
    try:
        generator = ServedRecallGenerator(EngineClient(fake.url, timeout=10.0), tokenizer)
        stream = generator.stream(MESSAGES, memory=None, max_new_tokens=6)
        pieces = iter(stream)
        next(pieces)
        started = time.perf_counter()
        pieces.close()
        took = time.perf_counter() - started
    finally:
        fake.close()
    assert took < 2.0 and stream.result is not None and stream.result.finish_reason == "cancelled"
    assert 1 <= stream.result.usage.generated_tokens <= 2  # the second id may come before the watchdog looks


def test_a_reply_cut_at_a_stop_string_keeps_its_request_record(tokenizer) -> None:
    """Cut by the client at a stop string (or ``max_time``), the request so far stays recorded: until
    2026-12-07 such a reply had no request, no first-token time and its last ids not in the engine's
    ids (a second reviewer)."""
    ids = tokenizer("Lisbon is sunny today and warm", add_special_tokens=False).input_ids
    fake = FakeLlamaServer(tokenizer, ([*ids, tokenizer.eos_token_id], None, None, "eos"))
    try:
        result = ServedRecallGenerator(fake.url, tokenizer).generate(MESSAGES, memory=None, stop=["today"],
                                                                     max_new_tokens=40)  # fmt: skip
    finally:
        fake.close()
    assert result.text.rstrip() == "Lisbon is sunny" and result.finish_reason == "stop"
    (request,) = result.output.requests
    assert request.first_token_s is not None and request.tokens == result.output.engine_ids[-len(request.tokens) :]


def test_a_reply_cut_on_ids_asked_for_again_keeps_its_request_record(tokenizer) -> None:
    """The ids a stream leaves out at a reply's end are asked for again; a criterion that fires on
    them lost the request's record (a third reviewer: 9 ids made, none recorded)."""
    import torch

    ids = tokenizer("Hi there \U0001F60A", add_special_tokens=False).input_ids
    made = len(ids) - 1  # the reply ends inside the emoji: its last ids get no event

    def stop_on_a_left_out_id(input_ids, scores, **kwargs):
        return torch.tensor([bool(input_ids[0, -1].item() == ids[made - 1])])

    fake = FakeLlamaServer(tokenizer, (ids, None, None, "limit"))
    try:
        result = ServedRecallGenerator(fake.url, tokenizer).generate(MESSAGES, memory=None, max_new_tokens=made,
                                                                     stopping_criteria=[stop_on_a_left_out_id])  # fmt: skip
    finally:
        fake.close()
    assert len(fake.bodies) == 2  # the stream, then the left-out ids asked for again
    (request,) = result.output.requests
    assert request.tokens and result.output.engine_ids[-len(request.tokens) :] == request.tokens


def test_a_reply_the_engines_context_cut_is_length(tokenizer) -> None:
    """The engine's ``stop_type`` ``"limit"`` before ``max_new_tokens``: its slot is full. llama.cpp's
    OpenAI API says ``"length"``; so does the result."""
    engine = ScriptedEngine(Completion(tokens=[5, 6], stop_type="limit", logprobs=[{5: -0.1}, {6: -0.1}]))
    result = ServedRecallGenerator(engine, tokenizer, context_window=512).generate(MESSAGES, memory=None,
                                                                                   max_new_tokens=8)  # fmt: skip
    assert (result.usage.generated_tokens, result.finish_reason) == (2, "length")


def test_notes_past_the_slot_are_skipped_and_a_prompt_past_it_is_refused_before_the_request(tokenizer) -> None:
    """Notes that with the reply would pass the slot are not injected (``NO_ROOM``, as in process;
    until 2026-12-07 they were refused with this ``ValueError``, or sent where the reply did not fit);
    a prompt the slot cannot hold is refused before any request."""
    from recall_core.decoding.budget import NO_ROOM

    engine = ScriptedEngine(Completion(tokens=[5, tokenizer.eos_token_id], stop_type="eos"))
    generator = ServedRecallGenerator(engine, tokenizer, context_window=64, memory=FixedMemory("Ana lives in Lisbon."))
    result = generator.generate([{"role": "user", "content": "Where do I live?"}], max_new_tokens=4,
                                config=RecallConfig(recall_policy="auto"))  # fmt: skip
    assert [r.reason for r in result.recalls] == [NO_ROOM] and len(engine.bodies) == 1
    crowded = ScriptedEngine()
    with pytest.raises(ValueError, match="longer than the model.s context window of 64"):
        ServedRecallGenerator(crowded, tokenizer, context_window=64).generate("word " * 80, max_new_tokens=4)
    assert crowded.bodies == []


@pytest.mark.parametrize("seed", [-1, 1.7, "abc", True, 2**32 - 1])
def test_a_bad_seed_is_refused_naming_it(seed: Any) -> None:
    with pytest.raises(ValueError, match="seed must be an int from 0 to 4294967294"):
        sampling_options({"do_sample": True, "seed": seed}, 8)
    assert sampling_options({"do_sample": True, "seed": 0}, 8)["seed"] == 0


@pytest.mark.parametrize("defaults", [{"no_repeat_ngram_size": 3}, {"max_length": 64}])
def test_defaults_an_engine_cannot_honour_are_refused_when_the_generator_is_made(tokenizer, defaults) -> None:
    with pytest.raises(ValueError, match="generation_defaults: "):
        ServedRecallGenerator("http://127.0.0.1:1", tokenizer, context_window=64, generation_defaults=defaults)


def test_the_engine_samples_as_transformers_does() -> None:
    """Temperature first (llama.cpp's default puts it last), the repetition penalty over the whole
    slot (llama.cpp's default: the last 64 ids; its -1 is refused by xllamacpp's checks)."""
    body = sampling_options({"do_sample": True, "temperature": 0.3, "top_p": 0.5, "repetition_penalty": 1.3}, 8, 2048)
    assert body["samplers"] == ["penalties", "temperature", "top_k", "top_p", "min_p"]
    assert (body["repeat_last_n"], body["repeat_penalty"]) == (2048, 1.3)


def test_a_client_without_pieces_reads_the_stream_as_sent(tokenizer) -> None:
    """An :class:`EngineClient` used on its own (no vocabulary) keeps the ids as the engine sent them."""
    reply = tokenizer("😊!", add_special_tokens=False).input_ids
    fake = FakeLlamaServer(tokenizer, (reply, None, None, "limit"))
    try:
        plain = EngineClient(fake.url).complete([1, 2], {"n_predict": len(reply)})
    finally:
        fake.close()
    assert plain.tokens == reply[3:] and len(fake.bodies) == 1  # the emoji's last id, then "!"


def test_a_generation_config_is_read_as_in_process(tokenizer) -> None:
    """A ``GenerationConfig`` was refused outright on a served backend ("generation_config: not
    supported"). Its fields are now read as transformers reads them: those it sets, under the
    call's own keywords; a field the engine cannot honour is refused by name."""
    engine = ScriptedEngine(*[Completion(tokens=[5, 6], stop_type="limit", logprobs=[{5: -0.1}, {6: -0.1}])] * 2)
    generator = ServedRecallGenerator(engine, tokenizer, context_window=512)
    config = GenerationConfig(max_new_tokens=5, do_sample=True, temperature=0.7, top_p=0.9, eos_token_id=3)
    generator.generate(MESSAGES, memory=None, generation_config=config)
    generator.generate(MESSAGES, memory=None, generation_config=config, max_new_tokens=3, temperature=0.2)
    first, second = engine.bodies
    assert (first["n_predict"], first["temperature"], first["top_p"]) == (5, 0.7, 0.9)
    assert (second["n_predict"], second["temperature"], second["top_p"]) == (3, 0.2, 0.9)
    with pytest.raises(ValueError, match="no_repeat_ngram_size: not supported on a served backend"):
        generator.generate(MESSAGES, memory=None, generation_config=GenerationConfig(no_repeat_ngram_size=3))


def test_a_client_with_pieces_asks_for_the_bytes_it_reads_the_left_out_ids_by(tokenizer) -> None:
    """Without ``n_probs`` the engine sends no piece bytes, only ``content``, where a character's end
    became U+FFFD: ``with_pieces`` then lost the emoji's first ids and asked again for ids it appended
    at the end (until 2026-12-07: a reviewer). It now asks for them itself."""
    reply = tokenizer(TEXT, add_special_tokens=False).input_ids
    fake = FakeLlamaServer(tokenizer, (reply, None, None, "limit"))
    try:
        found = EngineClient(fake.url).with_pieces(Pieces(tokenizer)).complete([1, 2], {"n_predict": len(reply)})
    finally:
        fake.close()
    assert found.tokens == reply and fake.bodies[0]["n_probs"] >= 1
