"""``RecallConfig.abstain_threshold``: a weak "I don't know." right after notes is masked, a confident one stands."""

from __future__ import annotations

import pytest
import torch
from transformers import LogitsProcessorList

from recall_core import RecallConfig, RecallGenerator
from recall_core.decoding.abstain import ABSTENTION, abstention_opening
from recall_core.training.family_data import UNKNOWN_REPLY
from tests.helpers.logits import GiveAt
from tests.helpers.memories import FixedMemory, ListMemory

FACT = "The user's dog is called Biscuit."
CHAT = [{"role": "user", "content": "What is my dog called?"}]
AUTO = RecallConfig(recall_policy="auto", abstain_threshold=0.5)
# ask_on_score off: the test memories' candidates score up to 1.0, which would ask on every call (test_engine_ask_score.py)
MODEL = RecallConfig(recall_policy="model", abstain_threshold=0.5, recall_threshold=0.0, ask_on_score=0.0)


@pytest.fixture
def gen(tiny):
    model, tokenizer = tiny
    return RecallGenerator(model, tokenizer, memory=FixedMemory(FACT), generation_defaults={"max_new_tokens": 6})


def _opening(gen) -> int:
    return abstention_opening(gen.tokenizer)


def _give(gen, p: float, steps: tuple[int, ...] | None = (0,)) -> LogitsProcessorList:
    return LogitsProcessorList([GiveAt(_opening(gen), p, gen.model.config.memory_pad_token_id, steps)])


def _reply_ids(gen, result) -> list[int]:
    pad = gen.model.config.memory_pad_token_id
    return [t for t in result.sequences[0, result.output.generated_start :].tolist() if t != pad]


# ---------------------------------------------------------------------- config
@pytest.mark.parametrize("bad", [-0.1, 1, 1.5, float("nan"), "0.5", True, None])
def test_a_bad_abstain_threshold_names_the_field_and_range(bad):
    with pytest.raises(ValueError, match=r"abstain_threshold must be in \[0, 1\) \(a probability\)"):
        RecallConfig(abstain_threshold=bad)


def test_the_default_abstain_threshold_is_a_majority():
    """0.5 by default, as ``recall_threshold``: "I don't know." after notes when it is more likely
    than everything else together (docs/benchmarks/heldout.md has the figures it was chosen by)."""
    assert RecallConfig().abstain_threshold == 0.5


def test_the_abstention_is_the_tuning_targets_text_and_opens_with_one_id(gen):
    assert ABSTENTION == UNKNOWN_REPLY == "I don't know."
    assert gen.tokenizer.decode([_opening(gen)]) == "I"
    assert abstention_opening(None) is None


# ---------------------------------------------------------------------- after notes
@pytest.mark.parametrize(("p", "threshold", "opens"), [(0.3, 0.5, False), (0.6, 0.5, True), (0.3, 0.0, True),
                                                     (0.3, 0.2, True), (0.9, 0.95, False)])  # fmt: skip
def test_after_notes_a_weak_abstention_is_masked_and_a_confident_one_stands(gen, p, threshold, opens):
    config = AUTO.replace(abstain_threshold=threshold)
    result = gen.generate(CHAT, config=config, logits_processor=_give(gen, p), return_dict_in_generate=True,
                          output_scores=True)  # fmt: skip
    assert [r.memory_id for r in result.recalls] == ["m0"]  # the notes were read first
    assert (_reply_ids(gen, result)[0] == _opening(gen)) is opens
    assert (result.output.scores[0][0, _opening(gen)] == -float("inf")) is not opens


def test_a_masked_abstention_opens_with_the_next_most_likely_token(gen):
    """Greedy: the reply is the one the model writes when the opening is simply not there."""
    weak = gen.generate(CHAT, config=AUTO, logits_processor=_give(gen, 0.3), return_dict_in_generate=True)
    banned = _give(gen, 1e-6)  # the opening all but absent: the same order of every other token
    plain = gen.generate(CHAT, config=AUTO.replace(abstain_threshold=0.0), logits_processor=banned,
                         return_dict_in_generate=True)  # fmt: skip
    assert torch.equal(weak.sequences, plain.sequences) and weak.text == plain.text


def test_only_the_first_token_after_the_notes_is_checked(gen):
    """Later in the reply the model says what it likes: the opening at p=0.3 on every step is
    masked once, then written."""
    result = gen.generate(CHAT, config=AUTO, logits_processor=_give(gen, 0.3, steps=None), return_dict_in_generate=True)
    ids = _reply_ids(gen, result)
    assert ids[0] != _opening(gen) and ids[1] == _opening(gen)


@pytest.mark.parametrize("memory", [None, ListMemory({}), ListMemory({"m": "zebra quantum"})],
                         ids=["no-memory", "empty", "below-min-score"])  # fmt: skip
def test_without_notes_nothing_is_masked_and_the_call_is_generates(gen, memory):
    """No notes were read (no memory, nothing found): the abstention is the model's to make, and a
    call is token for token the one with the check off."""
    on = gen.generate(CHAT, memory=memory, config=AUTO, logits_processor=_give(gen, 0.3), return_dict_in_generate=True)
    off = gen.generate(CHAT, memory=memory, config=AUTO.replace(abstain_threshold=0.0), logits_processor=_give(gen, 0.3),
                       return_dict_in_generate=True)  # fmt: skip
    assert _reply_ids(gen, on)[0] == _opening(gen)
    assert torch.equal(on.sequences, off.sequences)


def test_under_model_the_token_after_its_own_recall_is_checked(gen):
    """``"model"``: the model asks first, reads the notes, and the token after them is the one checked."""
    recall_id = gen.model.config.recall_token_id
    ask = GiveAt(recall_id, 0.99, gen.model.config.memory_pad_token_id, steps=(0,))
    weak = GiveAt(_opening(gen), 0.3, gen.model.config.memory_pad_token_id, steps=(1,))
    result = gen.generate(CHAT, config=MODEL, logits_processor=LogitsProcessorList([ask, weak]),
                          return_dict_in_generate=True)  # fmt: skip
    assert [r.trigger for r in result.recalls] == ["model"] and result.recalls[0].memory_id == "m0"
    ids = _reply_ids(gen, result)
    assert ids[0] == recall_id and ids[1] != _opening(gen)
    off = gen.generate(CHAT, config=MODEL.replace(abstain_threshold=0.0), logits_processor=LogitsProcessorList([
        GiveAt(recall_id, 0.99, gen.model.config.memory_pad_token_id, steps=(0,)),
        GiveAt(_opening(gen), 0.3, gen.model.config.memory_pad_token_id, steps=(1,))]), return_dict_in_generate=True)
    assert _reply_ids(gen, off)[1] == _opening(gen)


def test_sampling_never_draws_a_weak_abstention_after_notes(gen):
    """Sampled, the masked opening has no probability at that step; with the check off the same
    seeds draw it. The probability is read after the warpers, as ``recall_threshold``'s is:
    top_k=0 keeps it at 0.3."""

    def opened(threshold: float) -> int:
        count = 0
        for seed in range(10):
            torch.manual_seed(seed)
            result = gen.generate(CHAT, config=AUTO.replace(abstain_threshold=threshold), logits_processor=_give(gen, 0.3),
                                  do_sample=True, temperature=1.0, top_k=0, return_dict_in_generate=True)  # fmt: skip
            count += _reply_ids(gen, result)[0] == _opening(gen)
        return count

    assert opened(0.5) == 0
    assert opened(0.0) > 0
