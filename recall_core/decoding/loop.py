"""The recall decode loop: a ``custom_generate`` callable for ``model.generate()``.

``model.generate(input_ids, custom_generate=recall_generate, memory=..., recall_config=...,
recall_tokenizer=tokenizer)`` lets transformers prepare everything it does well (generation
config, logits processors and warpers, stopping criteria, the cache) and hands the decoding to
this loop, which follows ``GenerationMixin._sample`` step for step and adds only recall:

* when the last input of a forward pass is ``<recall>`` (in the prompt, generated, written
  by the model as the literal text ``<recall>``, or written by the loop itself before an
  uncertain token under ``recall_policy="uncertainty"``), the loop builds a query, searches the memory,
  chooses a candidate and runs one more forward pass with the memory as ``inputs_embeds`` on
  the same KV cache (with ``inject_mode="kv"`` the memory's precomputed keys and values are
  spliced into the cache instead and only a few of its tokens run: :mod:`recall_core.kv.inject`);
* ``sequences`` gets one ``<|memory_pad|>`` id per injected embedding, so its length always
  equals the cache length, and positions / attention mask grow by the same amount;
* the next token is sampled from the logits of the memory forward pass, so it has read the memory;
* a prompt's markers whose query is text are searched before the model runs, and the prompt is
  prefilled once with each notes block in place (:mod:`recall_core.decoding.prompt_notes`): the
  same trace and sequence as the pieces, with the first token sooner.

With no ``<recall>`` anywhere the loop performs exactly the same operations as ``_sample``
and so returns the same tokens (greedy, or sampling under the same seed). Without a memory the
model may not write ``<recall>`` (there is nothing to search: it is masked, as after
``max_recalls``), so such a call returns ``generate()``'s tokens with ``<recall>`` suppressed,
the same tokens wherever the model would not have asked.

transformers 5.23 does not pass ``streamer=`` or ``tokenizer=`` on to a callable
``custom_generate``, so this loop takes them as ``recall_streamer`` and ``recall_tokenizer``;
stop strings work through ``stopping_criteria=[StopStringCriteria(...)]``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import torch
from transformers.generation.logits_process import LogitsProcessorList
from transformers.generation.stopping_criteria import StoppingCriteriaList
from transformers.generation.utils import GenerateDecoderOnlyOutput

from recall_core.config import NO_MODEL_RECALL_POLICIES, RecallConfig
from recall_core.decoding.abstain import NotesShown, abstention_opening, contrasted, logits_without_notes
from recall_core.decoding.budget import NO_ROOM, AddedPositions, count_generated_only, room_for
from recall_core.decoding.hf_compat import (
    CACHE_KEY,
    cache_kwarg,
    counts_up,
    croppable,
    decode_context,
    decode_forward,
    grow_positions,
    prefill,
    shrink_positions,
    take_cache,
    update_model_kwargs,
)
from recall_core.decoding.notes import block_ids, memory_embeddings, note_lines
from recall_core.decoding.prompt_notes import TokenRecalls, prefill_once
from recall_core.decoding.query import QueryContext
from recall_core.decoding.triggers import (
    Inserted,
    ModelRecallGate,
    UncertaintyTrigger,
    recall_ruled_out,
    token_below_threshold,
)
from recall_core.kv.blocks import plan_block
from recall_core.kv.cache import cache_length, can_drop_last, drop_last, keep_every_position
from recall_core.kv.inject import KVInjection, inject_kv, kv_unavailable
from recall_core.kv.memories import KVMemories, default_kv_memories
from recall_core.memory.text.questions import asks
from recall_core.models.query_head import NO_QUERY_HEAD, RecallQueryHead
from recall_core.settings import check_one_path
from recall_core.structured.constrained import ConstrainedLogitsProcessor
from recall_core.tokens import RECALL_TOKEN, recall_token_ids, tokenizer_info
from recall_core.types import Memory, Recall

logger = logging.getLogger(__name__)
LITERAL_TRIGGER = RECALL_TOKEN
_KV_FALLBACK_WARNED: set[str] = set()


@dataclass
class RecallGenerateOutput(GenerateDecoderOnlyOutput):
    """``GenerateDecoderOnlyOutput`` plus the recall trace.

    After a recall inside the reply ``scores`` and ``logits`` (one entry per generated token, as
    in transformers) no longer line up with the end of ``sequences``: the injected notes' pads
    (and a ``<recall>`` the loop wrote itself) hold places in ``sequences`` but were not sampled,
    so have no entry, and ``compute_transition_scores(sequences, scores)`` would pair scores with
    pads. ``step_positions`` says where each entry's token is:
    ``compute_transition_scores(sequences[:, step_positions], scores)`` pairs them right.

    Attributes:
        recalls: every ``<recall>`` event, in order.
        generated_start: index in ``sequences`` of the first generated token: the prompt,
            plus what was injected inside it, minus prompt markers that were dropped.
        step_positions: for each decoding step, the index in ``sequences`` of the token it
            sampled: ``scores[i]``, ``logits[i]``, ``attentions[i]`` and ``hidden_states[i]``
            belong to ``sequences[:, step_positions[i]]`` (since 2026-12-06).
    """

    recalls: list[Recall] | None = None
    generated_start: int | None = None
    step_positions: list[int] | None = None


def recall_generate(
    model: Any,
    input_ids: torch.LongTensor,
    logits_processor: LogitsProcessorList,
    stopping_criteria: StoppingCriteriaList,
    generation_config: Any,
    synced_gpus: bool = False,
    streamer: Any = None,
    memory: Memory | None = None,
    recall_config: RecallConfig | None = None,
    recall_tokenizer: Any = None,
    recall_streamer: Any = None,
    recall_trace: list[Recall] | None = None,
    recall_callback: Callable[[Recall], None] | None = None,
    recall_query: str | None = None,
    recall_kv_memories: KVMemories | None = None,
    recall_query_head: RecallQueryHead | None = None,
    **model_kwargs: Any,
) -> torch.LongTensor | RecallGenerateOutput:
    """Decode with recall. Pass to ``model.generate(custom_generate=recall_generate, ...)``.

    The arguments before ``memory`` are filled in by ``generate()``. Our own:

    Args:
        memory: anything with ``search(RecallQuery, k) -> list[MemoryCandidate]``; ``None``
            decodes without recall: a prompt's ``<recall>`` is dropped and traced as "no memory",
            and the model may not write one.
        recall_config: a :class:`RecallConfig`; default ``RecallConfig()``.
        recall_tokenizer: the model's tokenizer, needed to build text queries and to
            tokenize memories (``generate()`` does not forward ``tokenizer=`` to callables).
        recall_streamer: a transformers streamer (``TextStreamer``, ``TextIteratorStreamer``).
        recall_trace: a list the loop appends each :class:`Recall` to (the tensor return
            value has nowhere else to put it).
        recall_callback: called with each :class:`Recall` as it happens.
        recall_query: the last user message of a chat prompt. The prompt's ``<recall>``
            markers search with it, whatever their place; a ``<recall>`` generated in the reply
            (by the model, or by the loop under ``recall_policy="uncertainty"``) searches with it
            followed by the reply's text so far, so a recall mid-answer asks about the turn and
            what the answer has reached (with a ``query_window``, the last tokens of that).
            ``None`` (a plain text prompt): every ``<recall>`` searches with the text before it.
        recall_kv_memories: where ``inject_mode="kv"`` keeps memory blocks
            (:class:`~recall_core.kv.memories.KVMemories`); default: the process-wide one.
        recall_query_head: a trained :class:`~recall_core.models.query_head.RecallQueryHead` for this
            model, which ``query_mode="hidden"`` needs: it maps the ``<recall>`` hidden states into
            the memory encoder's space, where the memory's regular index is searched.

    Returns:
        Like ``_sample``: the full ``sequences`` tensor, or a :class:`RecallGenerateOutput`
        (with ``recalls``) when ``return_dict_in_generate=True``.

    Raises:
        ValueError: options that leave recall's one decoding path (greedy or sampling, on the KV
            cache, from token ids: :func:`recall_core.settings.check_one_path`). ``assistant_model``
            never reaches this loop (transformers keeps it): pass none.
    """
    check_one_path(generation_config, model_kwargs)
    loop = _RecallLoop(
        model,
        logits_processor,
        stopping_criteria,
        generation_config,
        memory=memory,
        config=recall_config or RecallConfig(),
        tokenizer=recall_tokenizer,
        streamer=streamer if streamer is not None else recall_streamer,
        put_prompt=streamer is None and recall_streamer is not None,
        on_recall=recall_callback,
        prompt_query=recall_query,
        kv_memories=recall_kv_memories,
        query_head=recall_query_head,
    )
    return loop.run(input_ids, model_kwargs, recall_trace)


class _RecallLoop:
    """One call's worth of state. Kept in an object so each step reads as plain code."""

    def __init__(
        self,
        model: Any,
        logits_processor: LogitsProcessorList,
        stopping_criteria: StoppingCriteriaList,
        generation_config: Any,
        *,
        memory: Memory | None,
        config: RecallConfig,
        tokenizer: Any,
        streamer: Any,
        put_prompt: bool,
        on_recall: Callable[[Recall], None] | None,
        prompt_query: str | None = None,
        kv_memories: KVMemories | None = None,
        query_head: RecallQueryHead | None = None,
    ) -> None:
        if model.config.is_encoder_decoder:
            raise ValueError("recall_generate supports decoder-only (causal) language models only")
        if memory is not None and tokenizer is None:
            raise ValueError("recall_generate needs recall_tokenizer=<the model's tokenizer> when a memory is given")
        self.model = model
        # Length limits count generated tokens only: wrapped, never edited in place.
        self.added = AddedPositions()
        self.stopping_criteria, self.logits_processor = count_generated_only(stopping_criteria, logits_processor, self.added)
        self.generation_config = generation_config
        self.memory = memory
        self.config = config
        self.tokenizer = tokenizer
        self.streamer = streamer
        self.put_prompt = put_prompt
        self.on_recall = on_recall
        self.kv_memories = kv_memories
        #: The call's injection mode (``kv`` falls back to ``tokens`` for the whole call), and why it fell back.
        self.inject_mode, self.kv_fallback = config.inject_mode, None
        if config.query_mode == "hidden" and memory is not None:
            if query_head is None:
                raise ValueError(NO_QUERY_HEAD)
            query_head.check(model)  # a head trained for another model is refused, never applied
        self.recall_id, self.pad_id = recall_token_ids(model, tokenizer)
        self.recalls: list[Recall] = []
        self.prompt_length = 0
        # The abstention's opening, while the next token is the first one decided after notes.
        self.abstention_id = abstention_opening(tokenizer) if config.abstain_threshold > 0 else None
        self.notes = NotesShown()  # the gate's threshold and the abstention check follow it
        self.recall_gate = ModelRecallGate(self.recall_id, config, states=prompt_query is not None and not asks(prompt_query))
        # recall_policy="uncertainty", with a memory, never inside a constrained reply (forced tool
        # calls, response_format).
        self.uncertainty: UncertaintyTrigger | None = None
        if config.recall_policy == "uncertainty" and memory is not None:
            if not any(isinstance(p, ConstrainedLogitsProcessor) for p in logits_processor):
                self.uncertainty = UncertaintyTrigger(tokenizer, config.uncertainty_threshold)
        info = tokenizer_info(tokenizer, self.recall_id, self.pad_id) if tokenizer is not None else None
        self.closing_ids = info.closing_ids if info else frozenset()
        self.query_context = QueryContext(tokenizer, config, self.recall_id, self.pad_id,
                                          info.boundary_ids if info else frozenset(), prompt_query, query_head)
        #: The searches of this call (every recall, prompt or reply, counts against ``max_recalls``).
        self.searches = TokenRecalls(tokenizer, memory, config, self.query_context, self._record, room=self._room)

    # ------------------------------------------------------------------ driver
    def run(self, input_ids: torch.LongTensor, model_kwargs: dict[str, Any], trace: list[Recall] | None):
        if input_ids.shape[0] != 1:
            raise ValueError(
                f"recall_generate decodes one sequence at a time, got a batch of {input_ids.shape[0]}: "
                "call it once per row (RecallGenerator.generate_batch does)"
            )
        if input_ids.shape[1] == 0:
            raise ValueError("the prompt is empty: recall_generate needs at least one input token")
        model, gen = self.model, self.generation_config
        self.prompt_length = input_ids.shape[1]
        if self.streamer is not None and self.put_prompt:
            self.streamer.put(input_ids.cpu())

        collect = gen.return_dict_in_generate
        scores = () if collect and gen.output_scores else None
        raw_logits = () if collect and gen.output_logits else None
        attentions = () if collect and gen.output_attentions else None
        hidden_states = () if collect and gen.output_hidden_states else None

        steps: list[int] | None = [] if collect else None
        cache = model_kwargs.get(CACHE_KEY)
        self.inject_mode, self.kv_fallback = self._injection(cache)
        markers = bool((input_ids[0] == self.recall_id).any())
        # So that a marker that finds nothing can be taken back past a sliding window; not a cache the
        # caller gave generate() (transformers marks it): it is left as it is, as documented.
        needs = self.uncertainty is not None or (markers and not self._searches_before_running(model_kwargs))
        if needs and not getattr(cache, "_is_user_defined", False):
            keep_every_position(cache)
        model_forward = decode_forward(model, model_kwargs, gen)
        with decode_context(model):
            input_ids, outputs, model_kwargs = self._prefill(input_ids, model_kwargs)
            generated_start = input_ids.shape[1]
            pending = False  # the prompt's own <recall> tokens were handled by _prefill
            inserted: Inserted | None = None  # a <recall> the loop wrote before an uncertain token
            while True:
                if pending:
                    input_ids, outputs, model_kwargs = self._recall(
                        input_ids, outputs, model_kwargs, reply_start=generated_start, inserted=inserted
                    )
                    inserted = None
                model_kwargs = update_model_kwargs(model, outputs, model_kwargs)
                next_token_logits = outputs.logits[:, -1].to(copy=True, dtype=torch.float32, device=input_ids.device)
                next_token_scores = self._mask_control_tokens(self.logits_processor(input_ids, self._searchable(next_token_logits)))
                next_token_scores = self._mask_weak_abstention(next_token_scores, input_ids)
                inserted = self._uncertain(input_ids, next_token_scores, outputs.logits[:, -1:], model_kwargs)
                if inserted is not None:  # <recall> goes here; the token is sampled after the memory
                    self.added.count += 1  # the loop's marker, not a generated token (max_new_tokens)
                    next_tokens = torch.full((1,), self.recall_id, dtype=input_ids.dtype, device=input_ids.device)
                else:
                    if collect:
                        steps.append(input_ids.shape[1])  # where this step's token goes in the sequence
                        if scores is not None:
                            scores += (next_token_scores,)
                        if raw_logits is not None:
                            raw_logits += (next_token_logits,)
                        if attentions is not None:
                            attentions += (outputs.attentions,)
                        if hidden_states is not None:
                            hidden_states += (outputs.hidden_states,)
                    if gen.do_sample:
                        probs = torch.nn.functional.softmax(next_token_scores, dim=-1)
                        next_tokens = torch.multinomial(probs, num_samples=1).squeeze(1)
                    else:
                        next_tokens = torch.argmax(next_token_scores, dim=-1)
                input_ids = torch.cat([input_ids, next_tokens[:, None]], dim=-1)
                finished = bool(self.stopping_criteria(input_ids, scores).all())
                if self.streamer is not None:
                    self.streamer.put(next_tokens.cpu())
                del outputs
                if finished:
                    break
                pending = self._is_trigger(input_ids, int(next_tokens[0]))
                model_inputs = model.prepare_inputs_for_generation(input_ids, next_sequence_length=1, **model_kwargs)
                if pending and self.config.query_mode == "hidden":
                    model_inputs["output_hidden_states"] = True
                outputs = model_forward(**model_inputs, return_dict=True)

        if self.streamer is not None:
            self.streamer.end()
        if trace is not None:
            trace.extend(self.recalls)
        if not collect:
            return input_ids
        cache = model_kwargs.get(CACHE_KEY)
        return RecallGenerateOutput(
            sequences=input_ids,
            scores=scores,
            logits=raw_logits,
            attentions=attentions,
            hidden_states=hidden_states,
            **cache_kwarg(cache),
            recalls=list(self.recalls),
            generated_start=generated_start,
            step_positions=steps,
        )

    # ------------------------------------------------------------------ prompt
    def _prefill(self, input_ids: torch.LongTensor, model_kwargs: dict[str, Any]):
        """Run the prompt, cut after each ``<recall>`` so memories land where the marker is.

        With no ``<recall>`` in the prompt this is exactly ``generate()``'s own prefill. When
        nothing is injected at a prompt's ``<recall>`` the marker is dropped (cropped from the
        cache), so the prompt runs as if it were not there. Returns the sequence so far (with
        pads), the last forward's outputs and the model kwargs, which cover exactly the
        sequence so far.
        """
        prompt = input_ids
        # A cache given to generate() (a session's) already holds the first ``past`` ids: only
        # the ids after it are run, and only their markers are recalled at.
        past = cache_length(model_kwargs.get(CACHE_KEY))
        if past >= prompt.shape[1]:
            raise ValueError(f"the cache holds {past} positions: the prompt ({prompt.shape[1]} ids) must add at least one")
        cuts = {i + 1 for i in (prompt[0] == self.recall_id).nonzero().flatten().tolist() if i >= past}
        if cuts and self._searches_before_running(model_kwargs):
            sequence, outputs, model_kwargs = prefill_once(self.model, self.generation_config, self.searches, prompt,
                                                           past, model_kwargs)  # fmt: skip
            self.added.count += sequence.shape[1] - prompt.shape[1]  # notes added, dropped markers taken off
            return sequence, outputs, model_kwargs
        positions = model_kwargs.get("position_ids")
        mask = model_kwargs.get("attention_mask")
        hidden = self.config.query_mode == "hidden" and self.memory is not None
        model_kwargs = dict(model_kwargs)
        sequence, outputs, start = prompt[:, :past], None, past
        for end in sorted(cuts | {prompt.shape[1]}):
            marker = end in cuts
            previous = outputs
            # Before a marker keep the logits of the position before it too: they are the
            # logits to go on with if nothing is injected and the marker is dropped.
            keep = 2 if marker and end - start >= 2 else 1
            shift = sequence.shape[1] - start
            first = start == past
            sequence = torch.cat([sequence, prompt[:, start:end]], dim=-1)
            if positions is not None:
                tail = positions[..., start:end] + shift
                model_kwargs["position_ids"] = (
                    positions[..., :end] if first else torch.cat([model_kwargs["position_ids"], tail], -1)
                )
            if mask is not None:
                tail = mask[:, start:end]
                model_kwargs["attention_mask"] = mask[:, :end] if first else torch.cat([model_kwargs["attention_mask"], tail], -1)
            extra = {"output_hidden_states": True} if hidden and marker else {}
            if "logits_to_keep" in model_kwargs:
                extra["logits_to_keep"] = keep
            if first and past == 0:
                outputs = prefill(self.model, sequence, self.generation_config, {**model_kwargs, **extra})
            else:  # a later piece of the prompt, or the first one after a given cache: only the new ids run
                inputs = self.model.prepare_inputs_for_generation(
                    sequence, next_sequence_length=end - start, is_first_iteration=first, **model_kwargs
                )
                outputs = self.model(**{**inputs, **extra}, return_dict=True)
            model_kwargs = take_cache(outputs, model_kwargs)
            start = end
            if marker:
                if keep == 2:
                    before = outputs.logits[:, -2:-1]
                else:
                    before = previous.logits[:, -1:] if previous is not None else None
                sequence, outputs, model_kwargs = self._recall(sequence, outputs, model_kwargs, logits_before=before,
                                                               in_prompt=True, prompt_follows=end < prompt.shape[1])
            elif outputs.logits.shape[1] > 1:
                outputs.logits = outputs.logits[:, -1:]
        return sequence, outputs, model_kwargs

    def _searches_before_running(self, model_kwargs: dict[str, Any]) -> bool:
        """Can the prompt's markers be searched before the model runs, and the prompt run once?

        Yes when a marker's query is text (not the hidden state at it), its notes are injected
        as tokens (``kv`` splices precomputed blocks between pieces; a call where ``kv`` fell back
        runs as ``tokens``), a marker where nothing is found can be dropped (a croppable cache:
        the pieces would crop it), and the mask is the plain all-ones one ``generate()`` makes
        (no positions of the caller's to carry)."""
        cache = model_kwargs.get(CACHE_KEY)
        mask = model_kwargs.get("attention_mask")
        positions = model_kwargs.get("position_ids")
        return (self.inject_mode == "tokens"
                and (self.memory is None or self.config.query_mode != "hidden")
                and cache is not None and croppable(cache)
                and (positions is None or counts_up(positions))
                and (mask is None or bool(mask.all())))  # fmt: skip

    # ------------------------------------------------------------------ uncertainty
    def _uncertain(self, input_ids: torch.LongTensor, scores: torch.FloatTensor, logits: torch.Tensor,
                   model_kwargs: dict[str, Any]) -> Inserted | None:  # fmt: skip
        """The ``<recall>`` policy ``"uncertainty"`` writes before this token, while recalls are left
        (:meth:`UncertaintyTrigger.inserts`), else ``None``."""
        if self.uncertainty is None or self.searches.attempts >= self.config.max_recalls:
            return None
        return self.uncertainty.inserts(scores, input_ids.shape[1], logits, model_kwargs.get(CACHE_KEY))

    # ------------------------------------------------------------------ recall
    def _is_trigger(self, input_ids: torch.LongTensor, token: int) -> bool:
        """Does the token just sampled make the next forward's last input a ``<recall>``?

        Never under a policy where the model may not ask (``"explicit"``, ``"off"``)."""
        if self.config.recall_policy in NO_MODEL_RECALL_POLICIES:
            return False
        if token == self.recall_id:
            return True
        if token not in self.closing_ids:
            return False
        generated = input_ids[0, self.prompt_length :].tolist()
        tail = self.tokenizer.decode(generated[-8:], skip_special_tokens=False)
        return tail.endswith(LITERAL_TRIGGER)

    def _recall(
        self,
        sequence: torch.LongTensor,
        outputs: Any,
        model_kwargs: dict[str, Any],
        logits_before: torch.Tensor | None = None,
        reply_start: int | None = None,
        inserted: Inserted | None = None,
        in_prompt: bool = False,
        prompt_follows: bool = False,
    ):
        """Search, choose, inject. Returns, like ``_prefill``, ``(sequence, outputs, model_kwargs)``:
        the outputs are those whose logits give the next token.

        ``in_prompt``: a marker in the prompt (run in pieces); ``logits_before`` are the logits of
        the position before it, none where it opens the prompt (``prompt_follows``: more of the
        prompt runs after it, whose logits replace them). A prompt marker where nothing is
        injected is dropped from cache and sequence (where the cache can take it back:
        :func:`~recall_core.kv.cache.can_drop_last`). A marker the loop wrote (``inserted``, under
        ``recall_policy="uncertainty"``) is dropped the same way. ``reply_start``: where the reply
        begins in ``sequence`` (markers in the reply).
        """
        position = sequence.shape[1]
        entropy: float | None = None
        if inserted is not None:
            entropy, logits_before = inserted.entropy, inserted.logits
        trigger = "prompt" if in_prompt else ("uncertainty" if entropy is not None else "model")
        model_kwargs = take_cache(outputs, model_kwargs)
        found = self.searches.search(sequence[0, :-1].tolist(), None if in_prompt else reply_start, trigger,
                                     getattr(outputs, "hidden_states", None))  # fmt: skip
        query, chosen, reason, considered, empty = found.query, found.chosen, found.reason, found.considered, found.empty
        lines = note_lines(self.tokenizer, chosen, self.config) if chosen else [self.config.empty_notes]
        if (chosen or empty) and not self._room(len(block_ids(self.tokenizer, "\n".join(lines), self.config))):
            chosen, empty, reason = [], False, NO_ROOM
        if not chosen and not empty:
            cache = model_kwargs.get(CACHE_KEY)
            if (logits_before is not None or prompt_follows) and can_drop_last(cache):
                drop_last(cache)  # not transformers' crop: it cuts a recorded sliding-window past
                sequence = sequence[:, :-1]
                model_kwargs = shrink_positions(model_kwargs, 1)
                outputs.logits = logits_before  # none only where the next piece of the prompt runs
                position -= 1
                if self.uncertainty is not None and trigger == "uncertainty":
                    self.uncertainty.retracted_at = position  # not again at once, on the same logits
                    getattr(self.streamer, "retract", lambda n: None)(1)  # the streamer was given the marker
                self.added.count -= 1  # the prompt HF measured, or the loop's marker, is gone
            self._record(Recall(position, None, None, "", query.text, reason=reason, candidates=considered,
                                in_prompt=in_prompt, trigger=trigger, entropy=entropy))
            return sequence, outputs, model_kwargs

        notes = "\n".join(lines)  # notes_text(), whose lines the kv plan needs too
        mode = self.inject_mode if chosen else "tokens"
        # kv mode with every token recomputed is tokens mode: the same forward pass, no blocks.
        splice = mode == "kv" and self.config.kv_recompute != "all"
        if splice:
            plan, embeds = plan_block(self.tokenizer, chosen, self.config, lines), None
            length = len(plan.ids)
        else:
            embeds = memory_embeddings(self.model, self.tokenizer, chosen, self.config, notes=notes).to(self.model.dtype)
            length = embeds.shape[1]
        model_kwargs = grow_positions(model_kwargs, length)
        pads = torch.full((1, length), self.pad_id, dtype=sequence.dtype, device=sequence.device)
        sequence = torch.cat([sequence, pads], dim=-1)
        inputs = self.model.prepare_inputs_for_generation(sequence, next_sequence_length=length, **model_kwargs)
        kv: KVInjection | None = None
        if splice:
            kv = inject_kv(self.model, self.tokenizer, plan, self.config, inputs, self.kv_memories or default_kv_memories())
            outputs = kv.outputs
        else:
            inputs["input_ids"] = None
            inputs["inputs_embeds"] = embeds
            outputs = self.model(**inputs, return_dict=True)
        model_kwargs = take_cache(outputs, model_kwargs)
        self.added.count += length
        score, memory_id = (float(chosen[0].score), chosen[0].id) if chosen else (None, None)
        self._record(Recall(position, score, memory_id, notes, query.text, length=length,
                            reason=reason if empty else None, candidates=considered, in_prompt=in_prompt,
                            memories=tuple((c.id, float(c.score)) for c in chosen),
                            inject_mode=mode,
                            kv_recomputed=kv.recomputed if kv else (length if mode == "kv" else 0),
                            kv_reused=kv.reused if kv else 0, kv_discarded=kv.discarded if kv else 0,
                            trigger=trigger, entropy=entropy))  # fmt: skip
        return sequence, outputs, model_kwargs

    def _injection(self, cache: Any) -> tuple[str, str | None]:
        """The injection mode of this call, and why ``kv`` fell back to ``tokens`` (else ``None``):
        decided once, before the prompt runs, so that a call that falls back runs as ``tokens`` does
        (the prompt's markers searched first and the prompt run once: nothing to take back)."""
        mode = self.config.inject_mode
        reason = kv_unavailable(self.model, cache) if mode == "kv" else None
        return ("tokens", reason) if reason is not None else (mode, None)

    def _room(self, positions: int) -> bool:
        """Whether notes of ``positions`` fit in the model's window with all the reply may still take."""
        return room_for(self.model, self.generation_config, self.added, positions)

    def _record(self, recall: Recall) -> None:
        if recall.injected and self.kv_fallback is not None:  # each recall that injected says why not kv
            recall = replace(recall, kv_fallback=self.kv_fallback)
            if self.kv_fallback not in _KV_FALLBACK_WARNED:  # once per process and reason: the trace has it every time
                _KV_FALLBACK_WARNED.add(self.kv_fallback)
                logger.warning("inject_mode='kv' falls back to 'tokens': %s", self.kv_fallback)
        self.recalls.append(recall)
        self.notes.record(recall)
        if self.on_recall is not None:
            self.on_recall(recall)

    # ------------------------------------------------------------------ budget
    def _mask_control_tokens(self, scores: torch.FloatTensor) -> torch.FloatTensor:
        """Pads are never written; ``<recall>`` only with a memory to search, while recalls are left,
        under a policy that lets the model ask, and with at least ``own_recall_threshold()`` of the
        (processed) probability. A declined ``<recall>`` stays masked (:class:`ModelRecallGate`).

        Without a memory a ``<recall>`` would find nothing, and the tuned model was never trained
        past a bare one: it ended its reply there, or wrote its turn's end and went on as the user
        (docs/benchmarks/recall-tuning.md, "No memory attached"). So the call is ``generate()``'s
        with ``<recall>`` suppressed."""
        scores[:, self.pad_id] = -float("inf")
        if recall_ruled_out(self.config, self.memory, self.searches.attempts):
            scores[:, self.recall_id] = -float("inf")
        elif self.recall_gate.masks(scores[0], self.notes.found):
            scores[:, self.recall_id] = -float("inf")
        return scores

    def _searchable(self, logits: torch.FloatTensor) -> torch.FloatTensor:
        """The logits the processors see: without a memory, ``<recall>`` is out of the vocabulary
        from the start, as ``generate(suppress_tokens=...)`` leaves it, so top-k and top-p choose
        among the tokens that can be written (the raw logits kept for ``output_logits`` are untouched)."""
        if self.memory is not None:
            return logits
        logits = logits.clone()
        logits[:, self.recall_id] = -float("inf")
        return logits

    def _mask_weak_abstention(self, scores: torch.FloatTensor, input_ids: torch.LongTensor) -> torch.FloatTensor:
        """At the first token decided after notes were injected, the abstention's opening is masked
        when it has less than ``abstain_threshold``; with ``abstain_contrast`` the token then taken is
        the one the notes raise most (:mod:`recall_core.decoding.abstain`)."""
        if self.abstention_id is not None and self.notes.take_fresh():
            if token_below_threshold(scores[0], self.abstention_id, self.config.abstain_threshold):
                scores[:, self.abstention_id] = -float("inf")
                if self.config.abstain_contrast > 0:
                    without = logits_without_notes(self.model, input_ids, (self.pad_id, self.recall_id))
                    scores = contrasted(scores, without, self.config.abstain_contrast)
        return scores
