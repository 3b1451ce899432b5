"""``recall_policy="ask"``: the model decides at the start of its reply; when it asks, the call is
``"auto"``'s, when it does not, ``"model"``'s without a recall (recall_core/decoding/ask.py)."""

from __future__ import annotations

import math

import pytest
import torch
from transformers import LogitsProcessor, LogitsProcessorList

from recall_core import RecallConfig, RecallGenerator, RecallSession
from recall_core.decoding.ask import Decision, decide
from recall_core.serving import ServedRecallGenerator
from recall_core.serving.client import Completion
from recall_core.tokens import RECALL_TOKEN
from tests.helpers.engines import ScriptedEngine
from tests.helpers.memories import FixedMemory
from tests.helpers.tiny import tiny_model

FACT = "The user's dog is called Biscuit."
CHAT = [{"role": "user", "content": "What is my dog called?"}]
#: The abstention's own check (its ids, teacher-forced; served, a request as long as it): the
#: options that read the reply as text instead are tested in test_engine_ask_opener.py and
#: test_engine_ask_refusal.py (``ask_on_refusal``, on by default, is off here).
# ask_on_score off: the test memories' candidates score up to 1.0, which would ask on every call (test_engine_ask_score.py)
ASK = RecallConfig(recall_policy="ask", ask_on_refusal=False, ask_on_score=0.0)
AUTO = RecallConfig(recall_policy="auto")
DECLINED = RecallConfig(recall_policy="model", max_recalls=0)


class Decided(RecallGenerator):
    """The real first pass (its cache is used), with its decision replaced by ``asked``."""

    def __init__(self, *args, asked: bool, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.asked, self.passes = asked, 0

    def _first_pass(self, ids, config):
        decision, cache = super()._first_pass(ids, config)
        self.passes += 1
        return Decision(decision.probability, self.asked), cache


class AskAt(LogitsProcessor):
    """``<recall>`` raised when the reply has ``step`` tokens (the model would recall there)."""

    def __init__(self, recall_id: int, step: int) -> None:
        self.recall_id, self.step, self.start = recall_id, step, None

    def __call__(self, input_ids, scores):
        self.start = input_ids.shape[1] if self.start is None else self.start
        if input_ids.shape[1] - self.start == self.step:
            scores = scores.clone()
            scores[:, self.recall_id] += 1e4
        return scores


def _generator(asked: bool) -> Decided:
    model, tokenizer = tiny_model("llama")
    return Decided(model, tokenizer, memory=FixedMemory(FACT), generation_defaults={"max_new_tokens": 10}, asked=asked)


def _plain(gen: RecallGenerator, config: RecallConfig, **kwargs):
    return RecallGenerator.generate(gen, CHAT, config=config, **kwargs)


def test_the_decision_is_recall_first_with_at_least_the_threshold():
    log_probs = torch.log_softmax(torch.tensor([0.0, 1.0, 2.0]), dim=-1)
    assert decide(log_probs, 2, 0.5).asked and not decide(log_probs, 2, 0.7).asked
    assert not decide(log_probs, 1, 0.0).asked  # not the most likely token: no recall, whatever the threshold
    assert math.isclose(decide(log_probs, 2, 0.5).probability, float(log_probs[2].exp()), rel_tol=1e-6)


def test_asked_the_call_is_autos_token_for_token():
    gen = _generator(asked=True)
    got = gen.generate(CHAT, config=ASK)
    expected = _plain(gen, AUTO)
    assert gen.passes == 1 and torch.equal(got.sequences, expected.sequences) and got.text == expected.text
    assert [(r.trigger, r.in_prompt, r.length) for r in got.recalls] == [
        (r.trigger, r.in_prompt, r.length) for r in expected.recalls] and got.recalls[0].length > 0  # fmt: skip
    assert got.usage == expected.usage  # the first pass's ids count as computed, not cached


@pytest.mark.parametrize("sampling", [{"do_sample": False}, {"do_sample": True, "temperature": 0.8, "top_k": 20}])
def test_not_asked_the_call_is_models_without_a_recall(sampling):
    """From the first pass's cache, the same tokens as a fresh ``"model"`` call with no recall left,
    and a ``<recall>`` the model would write mid-answer is masked."""
    gen = _generator(asked=False)
    recall_id = gen.model.config.recall_token_id
    asking = LogitsProcessorList([AskAt(recall_id, 3)])
    torch.manual_seed(7)
    got = gen.generate(CHAT, config=ASK, logits_processor=asking, **sampling)
    torch.manual_seed(7)
    expected = _plain(gen, DECLINED, logits_processor=LogitsProcessorList([AskAt(recall_id, 3)]), **sampling)
    assert got.recalls == [] and recall_id not in got.sequences[0].tolist()
    assert torch.equal(got.sequences, expected.sequences) and got.usage.cached_tokens == 0


def test_the_real_first_pass_of_an_untrained_model_does_not_ask():
    model, tokenizer = tiny_model("llama")
    gen = RecallGenerator(model, tokenizer, memory=FixedMemory(FACT), generation_defaults={"max_new_tokens": 8})
    got = gen.generate(CHAT, config=ASK)
    assert got.recalls == [] and torch.equal(got.sequences, _plain(gen, DECLINED).sequences)


def test_without_a_memory_or_with_a_string_prompt_there_is_no_first_pass():
    gen = _generator(asked=True)
    no_memory = gen.generate(CHAT, memory=None, config=ASK)
    assert gen.passes == 0 and torch.equal(no_memory.sequences, _plain(gen, RecallConfig(recall_policy="model"),
                                                                       memory=None).sequences)  # fmt: skip
    text = gen.generate("Hello there", config=ASK)
    assert gen.passes == 0 and text.recalls == []


class DecidedSession(RecallSession):
    """A session whose decision pass runs for real, with its decision replaced by ``asked``."""

    def __init__(self, *args, asked: bool, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.asked, self.passes = asked, 0

    def _decide(self, logits, config):
        decision = super()._decide(logits, config)
        self.passes += 1
        return Decision(decision.probability, self.asked)


def _session(asked: bool) -> DecidedSession:
    model, tokenizer = tiny_model("llama")
    gen = RecallGenerator(model, tokenizer, memory=FixedMemory(FACT), generation_defaults={"max_new_tokens": 6})
    return DecidedSession(gen, asked=asked, recall_config=ASK)


def _expected(session: RecallSession, chat, config: RecallConfig):
    """The reply a fresh generate() gives, the conversation rendered as "ask" renders it (the system prompt first)."""
    from recall_core.prompt import with_system_prompt

    return RecallGenerator.generate(session.generator, with_system_prompt(chat, ASK.system_prompt), config=config)


USER_START = AUTO.replace(recall_position="user_start")


def test_a_session_not_asked_replies_as_model_without_a_recall_from_its_decision_pass():
    session = _session(asked=False)
    got = session.reply(CHAT)
    expected = _expected(session, CHAT, DECLINED)
    assert session.passes == 1 and got.recalls == [] and got.text == expected.text
    assert got.session.prefilled_tokens == expected.usage.prompt_tokens == got.usage.prompt_tokens
    assert got.usage.cached_tokens == 0  # the decision pass computed the prompt in this call


def test_a_session_asked_reads_the_notes_at_the_start_of_the_new_user_message():
    session = _session(asked=True)
    got = session.reply(CHAT)
    expected = _expected(session, CHAT, USER_START)
    assert session.passes == 1 and got.text == expected.text and got.recalls and got.recalls[0].length > 0
    assert [r.in_prompt for r in got.recalls] == [r.in_prompt for r in expected.recalls]


def test_an_ask_session_keeps_its_cache_from_turn_to_turn_whatever_it_decides():
    session = _session(asked=False)
    first = session.reply(CHAT)
    session.asked = True  # the second question asks: only the new message is prefilled again
    second = session.reply({"role": "user", "content": "And my cat?"})
    assert not second.session.fresh_prefill and second.session.reused_tokens > 0
    assert second.usage.cached_tokens == second.session.reused_tokens
    chat = [*CHAT, {"role": "assistant", "content": first.text}, {"role": "user", "content": "And my cat?"}]
    assert second.text == _expected(session, chat, USER_START).text and second.recalls
    session.asked = False
    third = session.reply({"role": "user", "content": "Thanks!"})
    assert not third.session.fresh_prefill and third.recalls == []


def test_a_failed_decision_pass_leaves_the_session_as_it_was():
    session = _session(asked=False)
    session.reply(CHAT)
    before = session.messages
    real = session._forward
    session._forward = lambda ids, **_: (_ for _ in ()).throw(RuntimeError("out of memory"))
    with pytest.raises(RuntimeError, match="out of memory"):
        session.reply({"role": "user", "content": "And my cat?"})
    assert session.messages == before  # the cache is back to what the turn kept (as a failed reply leaves it)
    session._forward = real
    again = session.reply({"role": "user", "content": "And my cat?"})
    assert not again.session.fresh_prefill and again.session.reused_tokens > 0


def test_a_session_without_memory_runs_ask_as_model_with_no_decision_pass():
    session = _session(asked=True)
    got = session.reply(CHAT, memory=None)
    assert session.passes == 0 and got.recalls == []


@pytest.mark.parametrize(("first", "p", "asked"), [("recall", 0.7, True), ("recall", 0.3, False), ("word", 0.9, False)])
def test_served_ask_decides_from_a_one_token_request(first: str, p: float, asked: bool):
    _, tokenizer = tiny_model("llama")
    recall_id, end = tokenizer.convert_tokens_to_ids(RECALL_TOKEN), tokenizer.eos_token_id
    token = recall_id if first == "recall" else 5
    decided = Completion(tokens=[token], stop_type="eos" if first == "recall" else "limit",
                         logprobs=[{token: math.log(p)}], cached_tokens=3)  # fmt: skip
    client = ScriptedEngine(decided, Completion(tokens=[7, end], stop_type="eos", logprobs=[{7: -0.1}, {end: -0.1}],
                                                cached_tokens=11))  # fmt: skip
    served = ServedRecallGenerator(client, tokenizer, context_window=512, memory=FixedMemory(FACT))
    # A declined <recall> would also have the abstention checked (below): not here.
    result = served.generate(CHAT, config=ASK.replace(ask_on_abstention=False), max_new_tokens=6)
    decision, call = client.bodies
    assert decision["n_predict"] == 1 and decision["temperature"] == 0.0
    model_ids = served.encode(CHAT, config=RecallConfig(recall_policy="model"))[0].tolist()
    assert decision["prompt"] == model_ids
    assert bool(result.recalls) is asked
    # The decision is the call's first request: shown with the reply's, and what the session's cache gave
    assert result.output.decided == [decided] and len(result.output.requests) == 1
    assert result.usage.cached_tokens == 3
    if asked:  # "auto": the notes are in the ids sent
        assert len(call["prompt"]) > len(model_ids) and result.recalls[0].length > 0
    else:  # "model" with no recall left: the same prompt, <recall> masked
        assert call["prompt"] == model_ids and [recall_id, False] in call["logit_bias"]


# -- ask_on_abstention: a reply that would be "I don't know." without memory asks for it ----------


def test_the_reply_reads_the_abstention_only_when_each_greedy_step_is_its_next_id():
    from recall_core.decoding.ask import reads_abstention, unrecalled_token

    recall_id, pad_id, abstention = 0, 1, (5, 6, 7)

    def steps(*tokens: int) -> torch.Tensor:
        logits = torch.zeros(len(tokens), 10)
        for i, token in enumerate(tokens):
            logits[i, token] = 5.0
            logits[i, recall_id] = 9.0  # <recall> and pads are masked: the reply has no recall
            logits[i, pad_id] = 9.0
        return logits

    ran: list[list[int]] = []

    def forced(*tokens: int):
        def run(ids: list[int]) -> torch.Tensor:
            ran.append(ids)
            return steps(*tokens)

        return run

    assert unrecalled_token(steps(5)[0], recall_id, pad_id) == 5
    assert reads_abstention(steps(5)[0], forced(6, 7), abstention, recall_id, pad_id)
    assert ran == [[5, 6]]  # the abstention's ids but the last, teacher-forced
    assert not reads_abstention(steps(5)[0], forced(6, 8), abstention, recall_id, pad_id)  # it goes on otherwise
    ran.clear()
    assert not reads_abstention(steps(4)[0], forced(6, 7), abstention, recall_id, pad_id)  # it opens otherwise
    assert ran == []  # nothing run when the reply opens otherwise
    assert not reads_abstention(steps(5)[0], forced(), (), 0, 1)
    assert reads_abstention(steps(5)[0], forced(), (5,), recall_id, pad_id) and ran == []


def _greedy_reply_ids(gen: RecallGenerator, n: int) -> tuple[int, ...]:
    """What the tiny model replies without memory, greedily (its "abstention" in these tests)."""
    reply = _plain(gen, DECLINED, max_new_tokens=n)
    return tuple(reply.sequences[0, -n:].tolist())


def test_a_reply_that_would_be_the_abstention_asks_and_runs_as_auto(monkeypatch: pytest.MonkeyPatch):
    import recall_core.generator as generator_module

    model, tokenizer = tiny_model("llama")
    gen = RecallGenerator(model, tokenizer, memory=FixedMemory(FACT), generation_defaults={"max_new_tokens": 10})
    said = _greedy_reply_ids(gen, 3)
    monkeypatch.setattr(generator_module, "abstention_ids", lambda _: said)
    traced = []
    got = gen.generate(CHAT, config=ASK, on_recall=traced.append)
    expected = _plain(gen, AUTO)
    assert got.recalls and got.recalls[0].length > 0 and torch.equal(got.sequences, expected.sequences)
    assert [r.trigger for r in got.recalls] == [r.trigger for r in traced] == ["abstention"]  # why it recalled
    assert [r.trigger for r in expected.recalls] == ["prompt"]
    off = gen.generate(CHAT, config=ASK.replace(ask_on_abstention=False))
    assert off.recalls == [] and torch.equal(off.sequences, _plain(gen, DECLINED).sequences)
    monkeypatch.setattr(generator_module, "abstention_ids", lambda _: (*said[:2], (said[2] + 1) % 50))
    other = gen.generate(CHAT, config=ASK)  # the same opening, another third token: no abstention
    assert other.recalls == [] and torch.equal(other.sequences, _plain(gen, DECLINED).sequences)


def test_a_session_asks_when_its_reply_would_be_the_abstention(monkeypatch: pytest.MonkeyPatch):
    import recall_core.session.decisions as decisions

    session = _session(asked=False)
    said = _greedy_reply_ids(session.generator, 3)
    monkeypatch.setattr(decisions, "abstention_ids", lambda _: said)
    got = session.reply(CHAT)
    expected = _expected(session, CHAT, USER_START)
    assert got.recalls and got.text == expected.text
    again = session.reply({"role": "user", "content": "And my cat?"})  # the cache went back: the turn goes on
    assert not again.session.fresh_prefill and again.session.reused_tokens > 0


def _check_tokens(tokenizer, said: str) -> list[int]:
    """What the served check's greedy request answers: ``said``, or the abstention's ids with the
    last one changed (``"other"``)."""
    from recall_core.decoding.abstain import abstention_ids

    if said == "other":
        abstention = abstention_ids(tokenizer)
        return [*abstention[:-1], abstention[-1] + 1]
    return tokenizer.encode(said, add_special_tokens=False)


@pytest.mark.parametrize(("first", "said", "openers", "asked"), [
    ("opening", "I don't know.", False, True), ("opening", "other", False, False),
    ("recall", "I don't know.", False, True), ("word", None, False, False),
    ("word", "Sure! I don't know.", True, True), ("word", "Your dog is called Biscuit.", True, False),
    ("recall", "Of course. I don't know.", True, True), ("opening", "I don't know.", True, True),
])  # fmt: skip
def test_served_ask_checks_the_abstention_with_one_greedy_request(first: str, said: str | None, openers: bool,
                                                                  asked: bool):  # fmt: skip
    """On the abstention's opening (or a declined ``<recall>``) the request is as long as the
    abstention and must be it; a word that is not its opening costs no request. With
    ``ask_after_openers`` any other first token asks for ``GIVES_UP_TOKENS`` tokens, whose text must
    give up, at once or after short openers."""
    from recall_core.decoding.abstain import GIVES_UP_TOKENS, abstention_ids

    _, tokenizer = tiny_model("llama")
    recall_id, end = tokenizer.convert_tokens_to_ids(RECALL_TOKEN), tokenizer.eos_token_id
    abstention = abstention_ids(tokenizer)
    token = {"opening": abstention[0], "recall": recall_id, "word": 5}[first]
    decision = Completion(tokens=[token], stop_type="limit", logprobs=[{token: math.log(0.3)}])
    reply = Completion(tokens=[7, end], stop_type="eos", logprobs=[{7: -0.1}, {end: -0.1}])
    checks = []
    if said is not None:
        tokens = _check_tokens(tokenizer, said)
        checks = [Completion(tokens=tokens, stop_type="limit", logprobs=[{t: -0.1} for t in tokens])]
    client = ScriptedEngine(decision, *checks, reply)
    served = ServedRecallGenerator(client, tokenizer, context_window=512, memory=FixedMemory(FACT))
    result = served.generate(CHAT, config=ASK.replace(ask_after_openers=openers), max_new_tokens=6)
    assert [r.trigger for r in result.recalls] == (["abstention"] if asked else [])
    assert len(client.bodies) == 2 + len(checks)
    assert result.output.decided == [decision, *checks] and result.output.requests == [reply]
    if checks:
        assert client.bodies[1]["n_predict"] == (GIVES_UP_TOKENS if openers else len(abstention))
        assert [recall_id, False] in client.bodies[1]["logit_bias"]


def test_served_check_reads_no_further_than_the_end_of_the_reply():
    """An engine may go on past the reply's end: what follows it is not the reply's text."""
    _, tokenizer = tiny_model("llama")
    end = tokenizer.eos_token_id
    tokens = [*_check_tokens(tokenizer, "Sure!"), end, *_check_tokens(tokenizer, " I don't know.")]
    decision = Completion(tokens=[5], stop_type="limit", logprobs=[{5: -0.1}])
    check = Completion(tokens=tokens, stop_type="limit", logprobs=[{t: -0.1} for t in tokens])
    reply = Completion(tokens=[7, end], stop_type="eos", logprobs=[{7: -0.1}, {end: -0.1}])
    served = ServedRecallGenerator(ScriptedEngine(decision, check, reply), tokenizer, context_window=512,
                                   memory=FixedMemory(FACT))  # fmt: skip
    assert served.generate(CHAT, config=ASK.replace(ask_after_openers=True), max_new_tokens=6).recalls == []


def test_no_abstention_check_under_a_constraint_or_where_it_would_not_fit(monkeypatch: pytest.MonkeyPatch):
    """A constrained reply cannot be "I don't know.", and the abstention's ids must fit in the window."""
    import recall_core.generator as generator_module

    model, tokenizer = tiny_model("llama")
    gen = RecallGenerator(model, tokenizer, memory=FixedMemory(FACT), generation_defaults={"max_new_tokens": 6})
    said = _greedy_reply_ids(gen, 3)
    monkeypatch.setattr(generator_module, "abstention_ids", lambda _: said)
    assert gen.generate(CHAT, config=ASK).recalls  # the check asks here...
    constrained = gen.generate(CHAT, config=ASK, response_format={"type": "json_object"}, max_new_tokens=4)
    assert constrained.recalls == []  # ...not under a constraint
    length = gen.encode(CHAT, config=RecallConfig(recall_policy="model")).shape[1]
    monkeypatch.setattr(gen.model.config, "max_position_embeddings", length + 2)  # one new token, not 2 forced ids
    assert gen.generate(CHAT, config=ASK, max_new_tokens=1).recalls == []


def test_a_session_whose_reply_opens_like_the_abstention_but_goes_on_otherwise_does_not_ask(
    monkeypatch: pytest.MonkeyPatch,
):
    import recall_core.session.decisions as decisions

    session = _session(asked=False)
    said = _greedy_reply_ids(session.generator, 3)
    monkeypatch.setattr(decisions, "abstention_ids", lambda _: (*said[:2], (said[2] + 1) % 50))
    got = session.reply(CHAT)
    assert got.recalls == [] and got.text == _expected(session, CHAT, DECLINED).text  # the forced ids left the cache
    again = session.reply({"role": "user", "content": "And my cat?"})
    assert not again.session.fresh_prefill and again.session.reused_tokens > 0


# --------------------------------------------------------------------------- "model" with ask_on_abstention
MODEL = RecallConfig(recall_policy="model", ask_on_refusal=False, ask_on_score=0.0)


def test_a_model_reply_that_would_be_the_abstention_opens_with_recall(monkeypatch: pytest.MonkeyPatch):
    """Under "model" the check puts ``<recall>`` where the model would have written it first; the
    reply is the one the prompt with that marker gives, and the recall is traced as "abstention"."""
    import recall_core.generator as generator_module

    model, tokenizer = tiny_model("llama")
    gen = RecallGenerator(model, tokenizer, memory=FixedMemory(FACT), generation_defaults={"max_new_tokens": 10})
    recall_id = tokenizer.convert_tokens_to_ids(RECALL_TOKEN)
    said = _greedy_reply_ids(gen, 3)
    plain = gen.generate(CHAT, config=MODEL)  # the tiny model's reply is not the real abstention: as before
    assert plain.recalls == [] and torch.equal(plain.sequences, _plain(gen, DECLINED).sequences)
    monkeypatch.setattr(generator_module, "abstention_ids", lambda _: said)
    traced = []
    got = gen.generate(CHAT, config=MODEL, on_recall=traced.append)
    ids = gen.encode(CHAT, config=MODEL)
    marked = torch.cat([ids, ids.new_full((1, 1), recall_id)], dim=-1)
    expected = gen.generate_ids(marked, recall_query=CHAT[-1]["content"], config=MODEL, max_new_tokens=10)
    assert torch.equal(got.sequences, expected.sequences) and got.text == expected.text
    assert [r.trigger for r in got.recalls] == [r.trigger for r in traced] == ["abstention"]
    assert got.recalls[0].length > 0 and FACT in got.recalls[0].text
    off = gen.generate(CHAT, config=MODEL.replace(ask_on_abstention=False))
    assert off.recalls == [] and torch.equal(off.sequences, plain.sequences)
    monkeypatch.setattr(generator_module, "abstention_ids", lambda _: (*said[:2], (said[2] + 1) % 50))
    other = gen.generate(CHAT, config=MODEL)  # the same opening, another third token: the model's reply
    assert other.recalls == [] and torch.equal(other.sequences, plain.sequences)


def test_a_model_reply_whose_first_token_is_the_models_own_recall_is_left_to_the_model():
    """The marker is added only upon the abstention: where the model puts ``<recall>`` first itself
    (the decision asked), nothing is added and the loop's decoding writes the model's own marker."""
    gen = _generator(asked=True)
    got = gen.generate(CHAT, config=MODEL)
    assert gen.passes == 1 and torch.equal(got.sequences, _plain(gen, MODEL.replace(ask_on_abstention=False)).sequences)


def _abstaining_model_session(monkeypatch: pytest.MonkeyPatch) -> RecallSession:
    """A ``"model"`` session on the tiny model whose own greedy reply stands in for the abstention."""
    import recall_core.session.decisions as decisions

    model, tokenizer = tiny_model("llama")
    gen = RecallGenerator(model, tokenizer, memory=FixedMemory(FACT), generation_defaults={"max_new_tokens": 6})
    said = _greedy_reply_ids(gen, 3)
    monkeypatch.setattr(decisions, "abstention_ids", lambda _: said)
    return RecallSession(gen, recall_config=MODEL)


def test_a_model_session_opens_with_recall_when_its_reply_would_be_the_abstention(monkeypatch: pytest.MonkeyPatch):
    session = _abstaining_model_session(monkeypatch)
    traced = []
    got = session.reply(CHAT, on_recall=traced.append)
    fresh = RecallSession(session.generator, recall_config=MODEL.replace(ask_on_abstention=False))
    assert fresh.reply(CHAT).recalls == []  # without the check: no recall
    assert [r.trigger for r in got.recalls] == [r.trigger for r in traced] == ["abstention"]
    assert got.recalls[0].length > 0 and FACT in got.recalls[0].text
    assert got.usage.cached_tokens == 0  # the check's pass computed the prompt in this call
    again = session.reply({"role": "user", "content": "And my cat?"})  # the cache goes on from the reply
    assert not again.session.fresh_prefill and again.session.reused_tokens > 0


def test_a_model_session_whose_check_fails_is_left_as_it_was(monkeypatch: pytest.MonkeyPatch):
    session = _abstaining_model_session(monkeypatch)
    assert session.reply(CHAT).recalls  # the check opened this reply with <recall>
    before = session.messages
    real = session._forward
    session._forward = lambda ids, **_: (_ for _ in ()).throw(RuntimeError("out of memory"))
    with pytest.raises(RuntimeError, match="out of memory"):
        session.reply({"role": "user", "content": "And my cat?"})
    assert session.messages == before
    session._forward = real
    again = session.reply({"role": "user", "content": "And my cat?"})
    assert not again.session.fresh_prefill and again.session.reused_tokens > 0


@pytest.mark.parametrize(("first", "said", "openers"), [
    ("opening", "I don't know.", False), ("word", None, False),
    ("word", "Of course. I don't know.", True), ("word", "Your dog is called Biscuit.", True),
])  # fmt: skip
def test_served_model_opens_with_recall_when_the_reply_would_be_the_abstention(first: str, said: str | None,
                                                                               openers: bool):  # fmt: skip
    """Served "model": a one-token request decides; a greedy request checks whether the reply would
    give up (on the abstention's opening; with ``ask_after_openers`` after any first token); the
    reply's request then carries ``<recall>`` and the notes after the prompt."""
    from recall_core.decoding.abstain import abstention_ids, gives_up

    _, tokenizer = tiny_model("llama")
    recall_id, end = tokenizer.convert_tokens_to_ids(RECALL_TOKEN), tokenizer.eos_token_id
    abstention = abstention_ids(tokenizer)
    token = {"opening": abstention[0], "word": 5}[first]
    decision = Completion(tokens=[token], stop_type="limit", logprobs=[{token: -0.1}])
    checks = []
    if said is not None:
        tokens = _check_tokens(tokenizer, said)
        checks = [Completion(tokens=tokens, stop_type="limit", logprobs=[{t: -0.1} for t in tokens])]
    reply = Completion(tokens=[7, end], stop_type="eos", logprobs=[{7: -0.1}, {end: -0.1}])
    client = ScriptedEngine(decision, *checks, reply)
    served = ServedRecallGenerator(client, tokenizer, context_window=512, memory=FixedMemory(FACT))
    result = served.generate(CHAT, config=MODEL.replace(ask_after_openers=openers), max_new_tokens=6)
    prompt = client.bodies[0]["prompt"]
    sent = client.bodies[-1]["prompt"]
    assert len(client.bodies) == 2 + len(checks)
    if said is not None and gives_up(said):
        assert [r.trigger for r in result.recalls] == ["abstention"] and result.recalls[0].length > 0
        assert sent[: len(prompt) + 1] == [*prompt, recall_id] and len(sent) > len(prompt) + 1
    else:
        assert result.recalls == [] and sent == prompt


def test_the_model_check_leaves_calls_that_cannot_recall_or_bring_their_own_cache(monkeypatch: pytest.MonkeyPatch):
    """``max_recalls=0`` allows no recall, so nothing is checked; a call that asks generate() for a
    cache of its own (``cache_implementation``) does not get the first pass's; the full output's
    trace says "abstention" too."""
    import recall_core.generator as generator_module

    model, tokenizer = tiny_model("llama")
    gen = RecallGenerator(model, tokenizer, memory=FixedMemory(FACT), generation_defaults={"max_new_tokens": 6})
    said = _greedy_reply_ids(gen, 3)
    monkeypatch.setattr(generator_module, "abstention_ids", lambda _: said)
    none = gen.generate(CHAT, config=MODEL.replace(max_recalls=0))
    assert none.recalls == [] and none.usage.prompt_tokens == gen.encode(CHAT, config=MODEL).shape[1]
    own = gen.generate(CHAT, config=MODEL, cache_implementation="dynamic")
    reused = gen.generate(CHAT, config=MODEL, return_dict_in_generate=True)
    assert torch.equal(own.sequences, reused.sequences) and own.usage.cached_tokens == 0
    assert [r.trigger for r in reused.output.recalls] == [r.trigger for r in reused.recalls] == ["abstention"]
