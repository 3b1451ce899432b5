"""Recall the model decides on: ``recall_policy="model"`` (its own ``<recall>``) and ``"uncertainty"``."""

from __future__ import annotations

import pytest
import torch
from transformers import LogitsProcessor, LogitsProcessorList

from recall_core import RECALL_TOKEN, RecallConfig, RecallGenerator, RecallSession
from recall_core.config import DEFAULT_SYSTEM_PROMPT
from recall_core.decoding.notes import memory_token_ids
from recall_core.decoding.triggers import content_ids
from recall_core.prompt import chat_prompt_ids, decorate
from tests.helpers.logits import GiveAt
from tests.helpers.memories import FixedMemory, ListMemory

FACT = "The user's dog is called Biscuit."
QUESTION = "What is my dog called?"
CHAT = [{"role": "user", "content": QUESTION}]
# ask_on_score off: the test memories' candidates score up to 1.0, which would ask on every call (test_engine_ask_score.py)
MODEL = RecallConfig(recall_policy="model", ask_on_score=0.0)
NEVER = RecallConfig(recall_policy="uncertainty", uncertainty_threshold=1e6)
ALWAYS = RecallConfig(recall_policy="uncertainty", uncertainty_threshold=1e-6)
SAMPLING = [{"do_sample": False}, {"do_sample": True, "temperature": 0.9, "top_k": 30}]


class AskAt(LogitsProcessor):
    """A model biased to emit ``<recall>``: its logit is raised when the reply has ``steps`` tokens
    (pads of injected memory not counted). Raised, not forced: ``max_recalls`` can still mask it."""

    def __init__(self, recall_id: int, pad_id: int, steps: tuple[int, ...]) -> None:
        self.recall_id, self.pad_id, self.steps, self.start = recall_id, pad_id, steps, None

    def __call__(self, input_ids, scores):
        if self.start is None:
            self.start = input_ids.shape[1]
        if int((input_ids[0, self.start :] != self.pad_id).sum()) in self.steps:
            scores = scores.clone()
            scores[:, self.recall_id] += 1e4
        return scores


class Masked(LogitsProcessor):
    """``token`` never written: the loop's own mask, after every other processor."""

    def __init__(self, token: int) -> None:
        self.token = token

    def __call__(self, input_ids, scores):
        scores = scores.clone()
        scores[:, self.token] = -float("inf")
        return scores


@pytest.fixture
def gen(tiny):
    model, tokenizer = tiny
    return RecallGenerator(model, tokenizer, memory=FixedMemory(FACT), generation_defaults={"max_new_tokens": 12})


def _ask_at(gen, *steps) -> LogitsProcessorList:
    return LogitsProcessorList([AskAt(gen.model.config.recall_token_id, gen.model.config.memory_pad_token_id, steps)])


def _plain(gen, messages, **kwargs):
    """Plain ``model.generate()`` on the prompt the unmarked policies render: the system prompt, then ``messages``."""
    ids = gen.tokenizer.apply_chat_template([{"role": "system", "content": DEFAULT_SYSTEM_PROMPT}, *messages],
                                            add_generation_prompt=True, return_tensors="pt", return_dict=True)  # fmt: skip
    return gen.model.generate(ids["input_ids"], **kwargs)


# ---------------------------------------------------------------------- config
@pytest.mark.parametrize("bad", [0, -1.0, float("inf"), float("nan"), "2", True, None])
def test_a_bad_threshold_names_the_field_and_range(bad):
    with pytest.raises(ValueError, match=r"uncertainty_threshold must be a number of nats > 0"):
        RecallConfig(recall_policy="uncertainty", uncertainty_threshold=bad)


@pytest.mark.parametrize("bad", [-0.1, 1, 1.5, float("nan"), "0.5", True, None])
def test_a_bad_recall_threshold_names_the_field_and_range(bad):
    with pytest.raises(ValueError, match=r"recall_threshold must be in \[0, 1\) \(a probability\)"):
        RecallConfig(recall_policy="model", recall_threshold=bad)


def test_a_bad_policy_names_the_allowed_ones():
    with pytest.raises(ValueError, match=r"recall_policy must be one of .*'model', 'ask', 'uncertainty'"):
        RecallConfig(recall_policy="entropy")


# ---------------------------------------------------------------------- prompts
@pytest.mark.parametrize("policy", ["model", "uncertainty"])
def test_the_prompt_is_the_training_prompt_without_a_marker(tiny, policy):
    """With no system message of its own, the prompt is token for token what the recall tuning renders."""
    _, tokenizer = tiny
    trained = tokenizer.apply_chat_template([{"role": "system", "content": DEFAULT_SYSTEM_PROMPT}, *CHAT],
                                            add_generation_prompt=True, tokenize=True, return_dict=False)  # fmt: skip
    ids = chat_prompt_ids(tokenizer, CHAT, policy, "system", DEFAULT_SYSTEM_PROMPT)
    assert ids == list(trained)
    assert tokenizer.convert_tokens_to_ids(RECALL_TOKEN) not in ids
    own = [{"role": "system", "content": "Be brief."}, *CHAT]  # the caller's system message is left as it is
    assert chat_prompt_ids(tokenizer, own, policy, "system", DEFAULT_SYSTEM_PROMPT) == list(
        tokenizer.apply_chat_template(own, add_generation_prompt=True, tokenize=True, return_dict=False)
    )
    config = RecallConfig(recall_policy=policy)
    assert decorate(CHAT, config) == [{"role": "system", "content": DEFAULT_SYSTEM_PROMPT}, *CHAT]
    assert decorate(own, config) == own


# ---------------------------------------------------------------------- policy "model"
def test_the_models_recall_at_the_start_and_mid_answer(gen):
    memory = ListMemory({"dog": FACT, "cat": "The user's cat is called Pepper."})
    result = gen.generate(CHAT, memory=memory, config=MODEL.replace(min_score=0.0),
                          logits_processor=_ask_at(gen, 0, 4))  # fmt: skip
    start, middle = result.recalls
    assert start.trigger == middle.trigger == "model" and start.injected and middle.injected
    assert start.entropy is None and not start.in_prompt
    recall_id, pad_id = gen.model.config.recall_token_id, gen.model.config.memory_pad_token_id
    sequence = result.sequences[0].tolist()
    prompt = gen.encode(CHAT, config=MODEL).shape[1]
    assert start.position == prompt + 1 and sequence[prompt] == recall_id  # the reply's first token
    assert sequence[middle.position - 1] == recall_id
    # The query: the user's message, then the reply so far (its words only).
    assert memory.queries[0].text == QUESTION
    said = [i for i in sequence[prompt : middle.position - 1] if i not in (recall_id, pad_id)]
    assert len(said) == 3
    assert middle.query == f"{QUESTION} {gen.tokenizer.decode(said, skip_special_tokens=True).strip()}"
    assert RECALL_TOKEN not in result.text and "<|memory_pad|>" not in result.text
    assert result.usage.generated_tokens == 12 and result.usage.injected_tokens == start.length + middle.length


@pytest.mark.parametrize("sampling", SAMPLING, ids=["greedy", "sampling"])
@pytest.mark.parametrize(("config", "seed"), [(MODEL, 3), (NEVER, 5)], ids=["model-never-asks", "uncertainty-never-reached"])
def test_a_recall_that_never_fires_generates_as_plain_generate(gen, sampling, config, seed):
    """``"model"`` on a model that never writes ``<recall>``, ``"uncertainty"`` with a threshold never reached."""
    torch.manual_seed(seed)
    got = gen.generate(CHAT, config=config, **sampling)
    torch.manual_seed(seed)
    expected = _plain(gen, CHAT, max_new_tokens=12, **sampling)
    assert got.recalls == [] and torch.equal(got.sequences, expected)


@pytest.mark.parametrize(("p", "threshold", "recalls"), [(0.4, 0.5, False), (0.6, 0.5, True), (0.4, 0.0, True),
                                                       (0.4, 0.3, True), (0.9, 0.95, False)])  # fmt: skip
def test_the_models_recall_runs_only_at_recall_threshold_or_above(gen, p, threshold, recalls):
    """``<recall>`` first in the distribution but under the threshold is masked: the reply is the one
    the model writes without it (the same tokens as a call where it never asked)."""
    recall_id = gen.model.config.recall_token_id
    config = MODEL.replace(recall_threshold=threshold)
    asked = LogitsProcessorList([GiveAt(recall_id, p, gen.model.config.memory_pad_token_id)])
    result = gen.generate(CHAT, config=config, logits_processor=asked)
    prompt = gen.encode(CHAT, config=config).shape[1]
    assert (result.sequences[0, prompt].item() == recall_id) is recalls
    assert [r.trigger for r in result.recalls] == (["model"] if recalls else [])
    if not recalls:
        never = gen.generate(CHAT, config=config)
        assert torch.equal(result.sequences, never.sequences) and result.text == never.text


@pytest.mark.parametrize(("first", "declined"), [(0.45, True), (0.3, False)], ids=["declined", "not-first"])
def test_a_recall_declined_once_stays_masked_for_the_reply(gen, first, declined):
    """``<recall>`` the most likely token at the first step (0.45, under the 0.5 threshold) is
    declined, and a confident one three tokens later (0.9) does not run either: the wish is judged
    once. At 0.3, with another token at 0.4, it was never the model's choice, so the later one runs."""
    recall_id, pad_id = gen.model.config.recall_token_id, gen.model.config.memory_pad_token_id
    other = gen.tokenizer.encode("Sure", add_special_tokens=False)[0]
    start = [GiveAt(other, 0.4 / (1 - first), pad_id), GiveAt(recall_id, first, pad_id)]  # other: 0.4 of the whole
    prompt = gen.encode(CHAT, config=MODEL).shape[1]
    ungated = gen.generate(CHAT, config=MODEL.replace(recall_threshold=0.0), max_new_tokens=1,
                           logits_processor=LogitsProcessorList(start))  # fmt: skip
    assert (ungated.sequences[0, prompt].item() == recall_id) is declined  # the first token only at 0.45
    asked = LogitsProcessorList([*start, GiveAt(recall_id, 0.9, pad_id, steps=(3,))])
    result = gen.generate(CHAT, config=MODEL, logits_processor=asked, return_dict_in_generate=True, output_scores=True)
    assert [r.trigger for r in result.recalls] == ([] if declined else ["model"])
    if declined:
        assert all(step[0, recall_id] == -float("inf") for step in result.output.scores)
        assert result.sequences[0, prompt].item() == other  # the next most likely token in its place
    else:
        assert result.sequences[0, prompt].item() == other
        assert result.recalls[0].position == prompt + 4  # <recall> was the reply's fourth token


def test_a_recall_that_ran_leaves_the_next_one_free(gen):
    """Only a declined wish masks the rest: after a recall that ran, a later confident one runs too
    (max_recalls permitting)."""
    recall_id, pad_id = gen.model.config.recall_token_id, gen.model.config.memory_pad_token_id
    asked = LogitsProcessorList([GiveAt(recall_id, 0.9, pad_id, steps=(0, 3))])
    result = gen.generate(CHAT, config=MODEL.replace(min_score=0.0), logits_processor=asked)
    assert [r.trigger for r in result.recalls] == ["model", "model"]


def test_the_default_recall_threshold_is_a_majority_and_the_scores_say_so(gen):
    """0.5 by default; a masked ``<recall>`` shows as ``-inf`` in ``scores`` (what was sampled from)."""
    assert RecallConfig().recall_threshold == 0.5
    recall_id = gen.model.config.recall_token_id
    result = gen.generate(CHAT, config=MODEL, logits_processor=LogitsProcessorList([GiveAt(recall_id, 0.45, gen.model.config.memory_pad_token_id)]),
                          return_dict_in_generate=True, output_scores=True)  # fmt: skip
    assert result.recalls == [] and result.output.scores[0][0, recall_id] == -float("inf")


@pytest.mark.parametrize(("config", "found", "recalls"),
                         [(RecallConfig(), False, True), (RecallConfig(auto_recall_threshold=0.5), False, False),
                          (RecallConfig(), True, False), (RecallConfig(recall_threshold=0.4), True, True),
                          (MODEL, False, False), (MODEL.replace(auto_recall_threshold=0.0), False, False)])  # fmt: skip
def test_under_auto_the_models_own_recall_has_its_own_threshold(gen, config, found, recalls):
    """Under ``"auto"``, when the prompt's recall found nothing, a ``<recall>`` the model writes at
    0.45 runs (``auto_recall_threshold`` 0 by default: it asks for what that search did not find);
    ``auto_recall_threshold=0.5`` masks it. Once notes were injected, ``recall_threshold`` judges it
    (a weak second recall would replace the notes the reply reads), and ``"model"`` keeps
    ``recall_threshold`` throughout."""
    recall_id = gen.model.config.recall_token_id
    memory = FixedMemory(FACT) if found else ListMemory({})
    assert config.own_recall_threshold(False) == (config.auto_recall_threshold if config.recall_policy == "auto"
                                                  else config.recall_threshold)  # fmt: skip
    assert config.own_recall_threshold(True) == config.recall_threshold  # after notes: recall_threshold
    low = LogitsProcessorList([GiveAt(recall_id, 0.45, gen.model.config.memory_pad_token_id)])
    result = gen.generate(CHAT, memory=memory, config=config, logits_processor=low, max_new_tokens=4)
    assert ("model" in [r.trigger for r in result.recalls]) is recalls
    if config.recall_policy == "auto":  # the prompt's recall ran, and found what the memory holds
        assert result.recalls[0].trigger == "prompt" and (result.recalls[0].memory_id is not None) is found


STATEMENT = [{"role": "user", "content": "morning. tryna learn rust on weekends, the borrow checker is bullying me"}]


@pytest.mark.parametrize(("on_statements", "chat", "recalls"),
                         [(True, STATEMENT, True), (False, STATEMENT, False), (False, CHAT, True)])  # fmt: skip
def test_a_new_users_news_is_not_answered_from_the_empty_notes(gen, on_statements, chat, recalls):
    """Under ``"auto"`` a new user's prompt recall finds nothing; a ``<recall>`` the model then
    writes itself reads the empty notes ("I don't know."). With ``own_recall_on_statements`` off it
    is masked when the message asks nothing, even as the model's most likely token, and stays masked
    for the reply; a question still recalls."""
    recall_id = gen.model.config.recall_token_id
    config = RecallConfig(own_recall_on_statements=on_statements, ask_on_statements=False)
    sure = LogitsProcessorList([GiveAt(recall_id, 0.99, gen.model.config.memory_pad_token_id)])
    result = gen.generate(chat, memory=ListMemory({}), config=config, logits_processor=sure, max_new_tokens=4)
    assert ("model" in [r.trigger for r in result.recalls]) is recalls
    assert result.recalls[0].trigger == "prompt"  # the prompt's recall ran either way
    assert config.own_recall_threshold(True, states=True) == config.recall_threshold  # after notes: as before


def test_statements_change_only_autos_threshold_before_notes():
    off = RecallConfig(own_recall_on_statements=False)
    assert off.own_recall_threshold(False, states=True) == float("inf")
    assert off.own_recall_threshold(False, states=False) == off.auto_recall_threshold
    assert off.replace(recall_policy="model").own_recall_threshold(False, states=True) == off.recall_threshold
    on = RecallConfig(own_recall_on_statements=True)
    assert on.own_recall_threshold(False, states=True) == on.auto_recall_threshold
    assert RecallConfig().own_recall_threshold(False, states=True) == float("inf")  # the default masks it


@pytest.mark.parametrize("bad", [1, "no", None])
def test_a_bad_own_recall_on_statements_names_the_field(bad):
    with pytest.raises(ValueError, match="own_recall_on_statements"):
        RecallConfig(own_recall_on_statements=bad)


def test_a_reply_ask_placed_notes_for_keeps_recall_threshold():
    """``"ask"`` runs an asked reply as ``"auto"``, but its model's later ``<recall>`` is judged as its
    decision was: by ``recall_threshold``, not ``"auto"``'s own threshold."""
    from recall_core.decoding.ask import Decision

    config = RecallConfig(recall_policy="ask", recall_threshold=0.3)
    asked, declined = Decision(0.9, True).config(config), Decision(0.1, False).config(config)
    assert asked.recall_policy == "auto" and asked.own_recall_threshold(False) == 0.3
    assert declined.recall_policy == "model" and declined.max_recalls == 0


@pytest.mark.parametrize("bad", [-0.1, 1, "0", None])
def test_a_bad_auto_recall_threshold_names_the_field_and_range(bad):
    with pytest.raises(ValueError, match=r"auto_recall_threshold must be in \[0, 1\) \(a probability\)"):
        RecallConfig(auto_recall_threshold=bad)


@pytest.mark.parametrize("p", [0.4, 0.99])
@pytest.mark.parametrize("sampling", SAMPLING, ids=["greedy", "sampling"])
def test_without_a_memory_the_model_may_not_recall(gen, p, sampling):
    """No memory: a ``<recall>`` would find nothing, so however likely it is masked, and the call is
    ``generate()``'s with ``<recall>`` suppressed (the tuned model, left at a bare one, ended its
    reply or went on as the user: docs/benchmarks/recall-tuning.md, "No memory attached")."""
    recall_id, pad_id = gen.model.config.recall_token_id, gen.model.config.memory_pad_token_id
    asks = LogitsProcessorList([GiveAt(recall_id, p, pad_id)])
    result = gen.generate(CHAT, memory=None, config=MODEL, logits_processor=asks, **sampling)
    assert recall_id not in result.sequences[0].tolist() and result.recalls == []
    if not sampling["do_sample"]:  # sampled, top-k would see the <recall> the bias gave back before it is masked
        masked = LogitsProcessorList([*asks, Masked(recall_id)])
        assert torch.equal(result.sequences, _plain(gen, CHAT, max_new_tokens=12, logits_processor=masked))
    sure = LogitsProcessorList([GiveAt(recall_id, 0.99, pad_id)])
    with_memory = gen.generate(CHAT, config=MODEL, logits_processor=sure, do_sample=False)
    assert with_memory.recalls and with_memory.recalls[0].trigger == "model"  # with a memory it recalls


def test_the_models_recalls_stop_at_max_recalls(gen):
    result = gen.generate(CHAT, config=MODEL.replace(max_recalls=1), logits_processor=_ask_at(gen, 0, 3, 6))
    assert len(result.recalls) == 1
    assert result.sequences[0].tolist().count(gen.model.config.recall_token_id) == 1


@pytest.mark.parametrize(
    ("memory", "reason"),
    [(ListMemory({}), "no memory"), (ListMemory({"m": "zebra quantum"}), "below min_score"),
     (ListMemory({}, fail=ConnectionError("chroma is down")), "memory error: ConnectionError: chroma is down")],
    ids=["empty", "below-min-score", "memory-error"],
)  # fmt: skip
@pytest.mark.filterwarnings("ignore:recall skipped:RuntimeWarning")
def test_a_models_recall_that_finds_nothing_reads_the_empty_notes(gen, memory, reason):
    """The model asked and nothing is found: the template around ``empty_notes`` goes in after its
    ``<recall>`` (tokens mode, even when kv is asked for), exactly as a note saying so would."""
    config = MODEL.replace(inject_mode="kv")
    result = gen.generate(CHAT, memory=memory, config=config, logits_processor=_ask_at(gen, 0))
    (recall,) = result.recalls
    assert recall.trigger == "model" and recall.reason == reason and not recall.injected
    assert recall.text == "(none)" and recall.inject_mode == "tokens" and recall.memory_id is None
    block = memory_token_ids(gen.tokenizer, "(none)", config)
    assert recall.length == len(block) and result.usage.injected_tokens == len(block)
    sequence = result.sequences[0].tolist()
    pad_id = gen.model.config.memory_pad_token_id
    assert sequence[recall.position - 1] == gen.model.config.recall_token_id
    assert sequence[recall.position : recall.position + len(block)] == [pad_id] * len(block)
    # The same reply as a memory whose one note is the text "(none)", injected in tokens mode.
    saying_so = gen.generate(CHAT, memory=FixedMemory("(none)"), logits_processor=_ask_at(gen, 0),
                             config=MODEL.replace(note_template="{text}"))  # fmt: skip
    assert torch.equal(result.sequences, saying_so.sequences) and saying_so.recalls[0].injected


def test_the_models_recall_stays_bare_with_empty_notes_none(gen):
    result = gen.generate(CHAT, memory=ListMemory({}), config=MODEL.replace(empty_notes=None),
                          logits_processor=_ask_at(gen, 0))  # fmt: skip
    assert result.recalls and all(r.length == 0 and r.text == "" for r in result.recalls)
    assert result.usage.injected_tokens == 0 and gen.model.config.memory_pad_token_id not in result.sequences[0]
    assert gen.model.config.recall_token_id in result.sequences[0]


@pytest.mark.parametrize("bad", [3, b"(none)", ["(none)"]])
def test_a_bad_empty_notes_names_the_field(bad):
    with pytest.raises(ValueError, match=r"empty_notes must be a string or None"):
        RecallConfig(empty_notes=bad)


# ---------------------------------------------------------------------- policy "uncertainty"
def test_a_tiny_threshold_recalls_before_an_uncertain_content_token(gen):
    memory = FixedMemory(FACT)
    result = gen.generate(CHAT, memory=memory, config=ALWAYS.replace(max_recalls=1))
    (recall,) = result.recalls
    assert recall.trigger == "uncertainty" and recall.injected and recall.entropy > 1e-6
    sequence = result.sequences[0].tolist()
    recall_id = gen.model.config.recall_token_id
    assert sequence[recall.position - 1] == recall_id and sequence.count(recall_id) == 1
    # It fired at the first step whose most likely token is a content token; the query is the
    # user's message and the reply before it.
    prompt = gen.encode(CHAT, config=ALWAYS).shape[1]
    said = sequence[prompt : recall.position - 1]
    assert not any(content_ids(gen.tokenizer)[i] for i in said)
    words = gen.tokenizer.decode(said, skip_special_tokens=True).strip()
    assert memory.queries[0].text == (f"{QUESTION} {words}" if words else QUESTION)
    # The loop's marker is not a generated token: the budget counts the model's tokens only; the usage
    # counts the marker with what recall added (until 2026-12-07 in no count, hence a "+ 1" here).
    usage = result.usage
    assert usage.generated_tokens == 12 and result.finish_reason == "length"
    assert usage.prompt_tokens + usage.injected_tokens + usage.generated_tokens == len(sequence)
    assert RECALL_TOKEN not in result.text


def test_uncertain_recalls_stop_at_max_recalls(gen):
    for cap in (0, 1, 3):
        result = gen.generate(CHAT, config=ALWAYS.replace(max_recalls=cap))
        assert len(result.recalls) == cap
        assert all(r.trigger == "uncertainty" and r.injected for r in result.recalls)


def test_no_memory_means_no_uncertain_recall(gen):
    result = gen.generate(CHAT, memory=None, config=ALWAYS)
    assert result.recalls == [] and torch.equal(result.sequences, _plain(gen, CHAT, max_new_tokens=12, do_sample=False))


@pytest.mark.parametrize("sampling", SAMPLING, ids=["greedy", "sampling"])
def test_a_recall_that_injects_nothing_is_taken_back(gen, sampling):
    """Below ``min_score`` every time: each marker is dropped, and the reply is plain generate()'s.

    (The model is kept from writing ``<recall>`` itself in both runs: once the recalls are spent
    the loop masks it, which plain generate() does not.)
    """
    memory = ListMemory({"m": "zebra quantum"})
    spent = {"suppress_tokens": [gen.model.config.recall_token_id, gen.model.config.memory_pad_token_id]}
    torch.manual_seed(11)
    got = gen.generate(CHAT, memory=memory, config=ALWAYS.replace(max_recalls=3), **sampling, **spent)
    torch.manual_seed(11)
    expected = _plain(gen, CHAT, max_new_tokens=12, **sampling, **spent)
    assert torch.equal(got.sequences, expected)
    assert [r.reason for r in got.recalls] == ["below min_score"] * 3
    assert all(r.trigger == "uncertainty" and r.entropy > 0 for r in got.recalls)
    assert len({r.position for r in got.recalls}) == 3  # never twice at once on the same logits


def test_a_memory_error_at_an_uncertain_recall_follows_on_memory_error(gen):
    broken = ListMemory({}, fail=ConnectionError("chroma is down"))
    with pytest.warns(RuntimeWarning, match="chroma is down"):
        result = gen.generate(CHAT, memory=broken, config=ALWAYS.replace(max_recalls=1))
    (recall,) = result.recalls
    assert recall.trigger == "uncertainty" and recall.reason.startswith("memory error: ConnectionError")
    assert torch.equal(result.sequences, _plain(gen, CHAT, max_new_tokens=12, do_sample=False))
    with pytest.raises(ConnectionError):
        gen.generate(CHAT, memory=broken, config=ALWAYS.replace(on_memory_error="raise"))


def test_no_uncertain_recall_inside_a_constrained_reply(gen):
    result = gen.generate(CHAT, config=ALWAYS, response_format={"type": "json_object"})
    assert [r for r in result.recalls if r.trigger == "uncertainty"] == []  # (the grammar lets the model ask)


def test_content_tokens_have_a_letter_or_digit_and_are_not_special(tiny):
    _, tokenizer = tiny
    content = content_ids(tokenizer)
    assert len(content) == len(tokenizer)
    for token in (RECALL_TOKEN, "<|memory_pad|>", tokenizer.eos_token):
        assert not content[tokenizer.convert_tokens_to_ids(token)]
    assert content[tokenizer("dog", add_special_tokens=False).input_ids[0]]
    assert not content[tokenizer(".", add_special_tokens=False).input_ids[0]]
    assert content_ids(tokenizer) is content  # once per tokenizer


def test_the_stream_joins_to_the_text(gen):
    expected = gen.generate(CHAT, config=ALWAYS.replace(max_recalls=2))
    assert "".join(gen.stream(CHAT, config=ALWAYS.replace(max_recalls=2))) == expected.text


# ---------------------------------------------------------------------- sessions
class Nudge(LogitsProcessor):
    """Makes ``ids`` the most likely tokens, one per reply token (pads and ``<recall>`` not counted),
    by a small margin: the distribution stays about as flat as it was, so uncertainty still fires."""

    def __init__(self, ids: list[int], skip: tuple[int, ...]) -> None:
        self.ids, self.skip, self.start = ids, skip, None

    def __call__(self, input_ids, scores):
        if self.start is None:
            self.start = input_ids.shape[1]
        step = sum(i not in self.skip for i in input_ids[0, self.start :].tolist())
        if step < len(self.ids):
            scores = scores.clone()
            scores[:, self.ids[step]] = scores.max() + 1.0
        return scores


@pytest.mark.parametrize("policy", ["model", "uncertainty"])
def test_a_session_reuses_the_cache_after_a_reply_with_a_recall(gen, policy):
    """The reply (its recall left out) goes back into the conversation as text; the next turn reuses it all."""
    # ask_on_names off: the message names Biscuit, whom the memory says, which would open the reply with a recall
    config = (MODEL if policy == "model" else ALWAYS).replace(max_recalls=1, ask_on_names=False)
    recall_id, pad_id = gen.model.config.recall_token_id, gen.model.config.memory_pad_token_id
    say = "Noted, my friend."
    ids = gen.tokenizer(say, add_special_tokens=False).input_ids + [gen.tokenizer.eos_token_id]
    processors = [Nudge(ids, (recall_id, pad_id))]
    if policy == "model":
        processors.append(AskAt(recall_id, pad_id, (2,)))
    session = RecallSession(gen)
    messages = [{"role": "user", "content": "My dog is called Biscuit."}]
    first = session.reply(messages, config=config, logits_processor=LogitsProcessorList(processors), max_new_tokens=20)
    assert first.text == say
    assert [r.trigger for r in first.recalls] == [policy] and first.recalls[0].injected
    assert first.recalls[0].position > gen.encode(messages, config=config).shape[1]  # in the reply
    cached = session.cache_tokens
    messages += [{"role": "assistant", "content": first.text}, {"role": "user", "content": QUESTION}]
    second = session.reply(messages, config=config)
    assert second.session.reused_tokens == cached and second.session.reason is None


# ---------------------------------------------------------------------- policies that forbid the model's recall
@pytest.mark.parametrize("policy", ["explicit", "off"])
def test_the_model_cannot_recall_under_explicit_or_off(gen, policy):
    """A model that writes its own ``<recall>`` (forced here, as the recall-tuned default does on its
    own) recalls nothing under ``"explicit"`` and ``"off"``: the token is masked, never sampled."""
    config = RecallConfig(recall_policy=policy)
    result = gen.generate(CHAT, config=config, logits_processor=_ask_at(gen, 0, 3))
    assert result.recalls == [] and result.usage.injected_tokens == 0
    assert gen.model.config.recall_token_id not in result.sequences[0].tolist()
    asked = gen.generate(CHAT, config=MODEL, logits_processor=_ask_at(gen, 0, 3))  # the same model, allowed
    assert [r.trigger for r in asked.recalls] == ["model", "model"]


def test_off_ignores_the_prompts_markers_and_explicit_honours_them(gen):
    prompt = f"Question: {QUESTION}{RECALL_TOKEN}"
    honoured = gen.generate(prompt, config=RecallConfig(recall_policy="explicit"))
    assert [r.injected for r in honoured.recalls] == [True]
    off = gen.generate(prompt, config=RecallConfig(recall_policy="off"))
    (recall,) = off.recalls
    assert not recall.injected and recall.reason == "recall off" and recall.in_prompt
    assert off.usage.injected_tokens == 0 and gen.model.config.recall_token_id not in off.sequences[0].tolist()
    # The marker is dropped: the reply is the one to the same prompt without it.
    plain = gen.generate(prompt.replace(RECALL_TOKEN, ""), config=RecallConfig(recall_policy="off"))
    assert off.text == plain.text


def test_off_places_no_marker_in_a_chat(gen):
    result = gen.generate(CHAT, config=RecallConfig(recall_policy="off"))
    assert result.recalls == [] and result.usage.injected_tokens == 0
    recall_id = gen.model.config.recall_token_id
    assert recall_id not in gen.encode(CHAT, config=RecallConfig(recall_policy="off"))[0].tolist()
