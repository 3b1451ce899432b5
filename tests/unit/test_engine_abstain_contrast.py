"""``RecallConfig.abstain_contrast``: a masked weak "I don't know." gives way to the token the notes raise most."""

from __future__ import annotations

import pytest
import torch
from transformers import LogitsProcessorList

from recall_core import RecallConfig, RecallGenerator
from recall_core.decoding.abstain import abstention_opening, contrasted, logits_without_notes
from recall_core.serving.loop import check_served_config
from recall_core.tokens import recall_token_ids
from tests.helpers.logits import ForceAt, GiveAt
from tests.helpers.memories import FixedMemory

FACT = "The user's dog is called Biscuit."
CHAT = [{"role": "user", "content": "What is my dog called?"}]
AUTO = RecallConfig(recall_policy="auto", abstain_threshold=0.5)


@pytest.fixture
def gen(tiny):
    model, tokenizer = tiny
    return RecallGenerator(model, tokenizer, memory=FixedMemory(FACT), generation_defaults={"max_new_tokens": 6})


def _give(gen, p: float) -> LogitsProcessorList:
    return LogitsProcessorList([GiveAt(abstention_opening(gen.tokenizer), p, gen.model.config.memory_pad_token_id)])


def _first_scores(gen, config: RecallConfig, p: float) -> tuple[torch.Tensor, object]:
    result = gen.generate(CHAT, config=config, logits_processor=_give(gen, p), return_dict_in_generate=True,
                          output_scores=True)  # fmt: skip
    return result.output.scores[0][0], result


def _logits(model, ids: list[int]) -> torch.Tensor:
    """The model's next-token logits after ``ids``, run from scratch."""
    with torch.no_grad():
        return model(input_ids=torch.tensor([ids])).logits[0, -1].float()


# ---------------------------------------------------------------------- config
@pytest.mark.parametrize("bad", [-0.1, 10.5, float("nan"), "0.5", None])
def test_a_bad_abstain_contrast_names_the_field_and_range(bad):
    with pytest.raises(ValueError, match=r"abstain_contrast must be in \[0, 10\] \(0: off\)"):
        RecallConfig(abstain_contrast=bad)


def test_a_served_backend_refuses_the_contrast_with_a_memory():
    """An engine returns a sampled token, not the distribution without the notes: refused with the reason."""
    with pytest.raises(ValueError, match="abstain_contrast"):
        check_served_config(RecallConfig(abstain_contrast=0.5), FixedMemory(FACT))
    check_served_config(RecallConfig(abstain_contrast=0.5), None)  # no memory, no notes, nothing to contrast


# ---------------------------------------------------------------------- the masked step
def test_a_masked_abstention_is_replaced_by_the_contrast_with_the_prompt_alone(gen):
    """(1 + a) log p(. | notes) - a log p(. | prompt), over the scores with the opening masked,
    where the prompt alone is its ids without the marker (as it runs when nothing is found)."""
    alpha = 0.5
    masked, result = _first_scores(gen, AUTO, 0.3)
    scores, _ = _first_scores(gen, AUTO.replace(abstain_contrast=alpha), 0.3)
    assert [r.memory_id for r in result.recalls] == ["m0"]
    recall_id, _ = recall_token_ids(gen.model, gen.tokenizer)
    prompt = [t for t in gen.encode(CHAT, config=AUTO)[0].tolist() if t != recall_id]
    expected = (1 + alpha) * torch.log_softmax(masked, -1) - alpha * torch.log_softmax(_logits(gen.model, prompt), -1)
    open_ = torch.isfinite(expected)
    assert not open_[abstention_opening(gen.tokenizer)]  # the opening stays masked
    assert torch.equal(torch.isfinite(scores), open_)
    torch.testing.assert_close(scores[open_], expected[open_], atol=1e-4, rtol=1e-4)


def test_a_confident_abstention_is_not_contrasted(gen):
    plain, _ = _first_scores(gen, AUTO, 0.9)
    scores, _ = _first_scores(gen, AUTO.replace(abstain_contrast=2.0), 0.9)
    assert torch.equal(plain, scores)


@pytest.mark.parametrize("memory", [None, FixedMemory()], ids=["no-memory", "nothing-found"])
def test_without_notes_the_call_is_the_plain_one(gen, memory):
    plain = gen.generate(CHAT, memory=memory, config=AUTO, logits_processor=_give(gen, 0.3), return_dict_in_generate=True)
    contrasted_run = gen.generate(CHAT, memory=memory, config=AUTO.replace(abstain_contrast=2.0),
                                  logits_processor=_give(gen, 0.3), return_dict_in_generate=True)  # fmt: skip
    assert torch.equal(plain.sequences, contrasted_run.sequences)


def test_only_the_masked_step_is_contrasted(gen):
    """Later tokens are scored as they would be: the second step's scores are the plain ones on the same ids."""
    _, result = _first_scores(gen, AUTO.replace(abstain_contrast=2.0), 0.3)
    first = int(result.sequences[0, result.output.generated_start])
    replay = gen.generate(CHAT, config=AUTO, logits_processor=LogitsProcessorList(
        [GiveAt(abstention_opening(gen.tokenizer), 0.3, gen.model.config.memory_pad_token_id), ForceAt(0, [first])]),
        return_dict_in_generate=True, output_scores=True)  # fmt: skip
    torch.testing.assert_close(result.output.scores[1], replay.output.scores[1])


# ---------------------------------------------------------------------- the pieces
def test_the_sequence_without_notes_leaves_out_pads_and_markers(tiny):
    model, _ = tiny
    without = logits_without_notes(model, torch.tensor([[5, 6, 99, 7, 98, 98, 8]]), (98, 99))
    torch.testing.assert_close(without[0], _logits(model, [5, 6, 7, 8]), atol=1e-5, rtol=1e-5)


def test_contrasted_keeps_masked_ids_masked():
    scores = torch.tensor([[0.0, -float("inf"), 1.0]])
    out = contrasted(scores, torch.tensor([[0.0, 5.0, -1.0]]), 0.5)
    assert out[0, 1] == -float("inf") and torch.isfinite(out[0, [0, 2]]).all()
    assert out[0, 2] > out[0, 0]  # raised by the notes, lowered by the prompt alone


def test_under_model_the_token_after_its_own_recall_is_contrasted_with_the_sequence_without_it(gen):
    """``"model"``: the sequence without notes is the prompt and the reply so far, its ``<recall>`` left out."""
    alpha = 0.5
    pad = gen.model.config.memory_pad_token_id
    recall_id, _ = recall_token_ids(gen.model, gen.tokenizer)
    config = RecallConfig(recall_policy="model", abstain_threshold=0.5, recall_threshold=0.0, ask_on_score=0.0)

    def run(weight: float):
        processors = LogitsProcessorList([GiveAt(recall_id, 0.99, pad, steps=(0,)),
                                          GiveAt(abstention_opening(gen.tokenizer), 0.3, pad, steps=(1,))])  # fmt: skip
        return gen.generate(CHAT, config=config.replace(abstain_contrast=weight), logits_processor=processors,
                            return_dict_in_generate=True, output_scores=True)  # fmt: skip

    plain, contrasted_run = run(0.0), run(alpha)
    assert [r.trigger for r in contrasted_run.recalls] == ["model"] and contrasted_run.recalls[0].memory_id == "m0"
    masked = plain.output.scores[1][0]  # the token after the notes: its opening masked, not contrasted
    prompt = [t for t in gen.encode(CHAT, config=config)[0].tolist() if t != recall_id]
    expected = (1 + alpha) * torch.log_softmax(masked, -1) - alpha * torch.log_softmax(_logits(gen.model, prompt), -1)
    open_ = torch.isfinite(expected)
    torch.testing.assert_close(contrasted_run.output.scores[1][0][open_], expected[open_], atol=1e-4, rtol=1e-4)
