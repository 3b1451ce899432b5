"""Constrained decoding: a grammar compiled for a tokenizer, applied as a logits processor.

The grammar engine is `llguidance <https://github.com/guidance-ai/llguidance>`_ (JSON schema,
Lark grammars with embedded JSON schemas, special tokens by id). It was picked over xgrammar
and outlines-core on the default model by ``benchmarks/constrained_decoding.py``: the lowest
per-token overhead, and a wheel with no dependencies (xgrammar pulls triton and a second
torch). Nothing here parses a JSON schema: llguidance does.

:class:`Constraint` is a checked grammar for one tokenizer; each generation gets a fresh
:class:`ConstrainedLogitsProcessor` from it. The processor composes with the recall loop:

* ``<recall>`` and the ``<|memory_pad|>`` ids of an injected memory are not text: the
  matcher never sees them (``skip_ids``), so a recall inside a constrained span leaves the
  grammar where it was;
* ``<recall>`` stays allowed next to the grammar's tokens (``allow_ids``) when there is a
  memory to search, so the grammar does not forbid the recall that precedes an answer (the
  loop itself masks it once ``max_recalls`` is reached).
"""

from __future__ import annotations

import json
import time
import weakref
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

import numpy as np
import torch
from transformers import LogitsProcessor, StoppingCriteria

from recall_core.structured.json_cursor import JsonCursor, Path, Values
from recall_core.structured.schemas import NOT_BLANK as NOT_BLANK
from recall_core.structured.schemas import fits, missing_json, missing_keys, strict_schema
from recall_core.structured.schemas import skeleton as skeleton

#: How JSON is written under a constraint: ``json.dumps``' separators and no other whitespace.
#: Flexible whitespace lets a small model loop on newlines until the token budget is spent.
JSON_OPTIONS: Mapping[str, Any] = {"whitespace_flexible": False, "item_separator": ", ", "key_separator": ": "}


#: Seconds a constrained reply may take unless the call says (``max_time=`` / ``timeout=``): near
#: the end the JSON is closed (see :class:`ConstrainedLogitsProcessor`), so a small model that
#: loops inside a string returns within about this long instead of minutes.
CONSTRAINED_MAX_TIME = 60.0

class GrammarError(ValueError):
    """A grammar or JSON schema the engine cannot compile; the message names what it was for."""


def _llguidance() -> Any:
    try:
        import llguidance
        import llguidance.hf  # noqa: F401
    except ImportError as error:  # a dependency of recall-llm: only a broken install gets here
        raise ImportError("constrained decoding needs llguidance: pip install llguidance") from error
    return llguidance


# --------------------------------------------------------------------------- grammars
def json_schema_grammar(schema: Mapping[str, Any]) -> str:
    """An llguidance grammar for JSON that matches ``schema`` (objects strict, compact JSON)."""
    if not isinstance(schema, Mapping):
        raise GrammarError(f"a JSON schema must be a dict, got {type(schema).__name__}")
    return _llguidance().LLMatcher.grammar_from_json_schema(strict_schema(schema), defaults=dict(JSON_OPTIONS))


def json_object_grammar() -> str:
    """JSON mode: any JSON object."""
    return _llguidance().LLMatcher.grammar_from_json_schema({"type": "object"}, defaults=dict(JSON_OPTIONS))


def lark_grammar(lark: str) -> str:
    """An llguidance grammar from Lark text (``%json {...}`` embeds a JSON schema, ``<[id]>`` a token)."""
    return _llguidance().LLMatcher.grammar_from_lark(lark)


def engine_grammar(grammar: str) -> str:
    """``grammar`` (any of the functions above) as llama.cpp's server takes it in ``"grammar"``:
    ``%llguidance {}`` and Lark text, which a llama.cpp built with llguidance hands to the same
    engine (the ``xllamacpp`` wheel of ``make engine`` is; a plain ``llama-server`` answers that
    llguidance is not enabled)."""
    text = grammar
    if grammar.lstrip().startswith("{"):  # a JSON schema grammar: the same schema, inline in Lark
        (item,) = json.loads(grammar)["grammars"]
        text = item.get("lark_grammar") or "start: %json " + json.dumps(item["json_schema"], ensure_ascii=False)
    return "%llguidance {}\n" + text


def lark_json(schema: Mapping[str, Any]) -> str:
    """``schema`` as an inline Lark ``%json`` rule body (strict, compact JSON)."""
    strict = strict_schema(schema)
    strict["x-guidance"] = {**dict(JSON_OPTIONS), **strict.get("x-guidance", {})}
    return "%json " + json.dumps(strict, ensure_ascii=False)


def lark_literal(tokenizer: Any, text: str) -> str:
    """``text`` in Lark: its special token by id when it is one (the model emits that id), else a string."""
    token_id = tokenizer.convert_tokens_to_ids(text) if text in tokenizer.get_added_vocab() else None
    if token_id is not None and is_special(tokenizer, token_id):
        return f"<[{token_id}]>"
    return json.dumps(text, ensure_ascii=False)


def is_special(tokenizer: Any, token_id: int) -> bool:
    """Is ``token_id`` an added token marked special (dropped by ``decode(skip_special_tokens=True)``)?"""
    added = getattr(tokenizer, "added_tokens_decoder", {}).get(token_id)
    return bool(added is not None and getattr(added, "special", False)) or token_id in tokenizer.all_special_ids


def check_grammar(grammar: str, label: str) -> str:
    """``grammar`` when the engine compiles it (no tokenizer needed), else ``GrammarError`` naming ``label``."""
    is_error, messages = _llguidance().LLMatcher.validate_grammar_with_warnings(grammar, None)
    if is_error:
        raise GrammarError(f"{label}: the grammar engine cannot compile its schema ({messages[0] if messages else ''})")
    return grammar


def skeleton_tokens(tokenizer: Any, schema: Any, path: Path = ()) -> int:
    """Tokens of the shortest JSON still to write for ``schema`` at ``path`` (:func:`missing_json`:
    all of :func:`skeleton` at ``()``), written as the constraint writes JSON; of several branches,
    the one with the most tokens."""

    def size(value: Any) -> int:
        return len(tokenizer(json.dumps(value, ensure_ascii=False, separators=(", ", ": ")),
                             add_special_tokens=False).input_ids)  # fmt: skip

    text = missing_json(schema, path, size)
    return len(tokenizer(text, add_special_tokens=False).input_ids) if text else 0


# --------------------------------------------------------------------------- tokenizers
#: Per HF tokenizer: {(vocabulary size of the logits, tokenizer size): llguidance tokenizer}. Weak keys.
_LL_TOKENIZERS: weakref.WeakKeyDictionary[Any, dict[tuple[int, int], Any]] = weakref.WeakKeyDictionary()


def ll_tokenizer(tokenizer: Any, vocab_size: int) -> Any:
    """The llguidance view of ``tokenizer`` for logits of ``vocab_size`` (built once: about 0.5 s)."""
    llguidance = _llguidance()
    per_size = _LL_TOKENIZERS.setdefault(tokenizer, {})
    key = (vocab_size, len(tokenizer))
    if key not in per_size:
        if not getattr(tokenizer, "is_fast", False):
            raise ValueError(
                f"constrained decoding needs a fast (Rust) tokenizer, got {type(tokenizer).__name__}: "
                "load it with use_fast=True"
            )
        eos = _eos_ids(tokenizer)
        per_size[key] = llguidance.hf.from_tokenizer(tokenizer, n_vocab=vocab_size, eos_token=eos or None)
    return per_size[key]


#: Per HF tokenizer: (its size, each token's text). Weak keys.
_TEXTS: weakref.WeakKeyDictionary[Any, tuple[int, list[str]]] = weakref.WeakKeyDictionary()
_CLOSING_CHARS = frozenset('"}]')
#: Per HF tokenizer: (its size, :func:`closing_ids`). Weak keys.
_CLOSERS: weakref.WeakKeyDictionary[Any, tuple[int, tuple[list[int], list[int], list[int]]]] = weakref.WeakKeyDictionary()


def token_texts(tokenizer: Any) -> list[str]:
    """The text of every token id on its own (computed once per tokenizer)."""
    cached = _TEXTS.get(tokenizer)
    if cached is None or cached[0] != len(tokenizer):
        cached = (len(tokenizer), tokenizer.batch_decode([[i] for i in range(len(tokenizer))]))
        _TEXTS[tokenizer] = cached
    return cached[1]


def closing_ids(tokenizer: Any) -> tuple[list[int], list[int], list[int]]:
    """Ids of tokens made only of JSON closers: ``(those that start with a quote, the others)``, and
    of those that start with what follows a value (``,``, ``}``, ``]``), which end a number
    (computed once per tokenizer: 50-60 ms on the default's)."""
    texts = token_texts(tokenizer)
    cached = _CLOSERS.get(tokenizer)
    if cached is not None and cached[0] == len(texts):
        return cached[1]
    quotes, brackets, after_value = [], [], []
    for i, text in enumerate(texts):
        text = text.strip()
        if text and set(text) <= _CLOSING_CHARS:
            (quotes if text.startswith('"') else brackets).append(i)
        if text[:1] in (",", "}", "]"):
            after_value.append(i)
    _CLOSERS[tokenizer] = (len(texts), (quotes, brackets, after_value))
    return quotes, brackets, after_value


def _eos_ids(tokenizer: Any) -> list[int]:
    eos = tokenizer.eos_token_id
    return [eos] if isinstance(eos, int) else list(eos or [])


# --------------------------------------------------------------------------- constraints
class Constraint:
    """A grammar checked against one tokenizer; :meth:`logits_processor` makes a fresh matcher.

    Args:
        tokenizer: the model's (fast) tokenizer.
        grammar: an llguidance grammar (:func:`json_schema_grammar`, :func:`lark_grammar`...).
        vocab_size: the width of the model's logits (may exceed ``len(tokenizer)``).
        name: what the grammar is for, named in errors ("tool 'get_weather'", "response_format").
        schemas: the JSON schemas the grammar writes (a response format's, the tools' parameters):
            the end of a budget or of the time keeps room for their required keys.

    Raises:
        GrammarError: the engine cannot compile the grammar.
    """

    def __init__(
        self, tokenizer: Any, grammar: str, *, vocab_size: int, name: str = "grammar", schemas: Iterable[Any] = ()
    ) -> None:
        self.tokenizer = tokenizer
        self._schemas = list(schemas)
        self._reserves: dict[Path, int] = {}
        #: Tokens that closing a reply (end of budget or time) may need beyond its open brackets: the shortest
        #: JSON of the largest of ``schemas`` (its required keys), at least the processor's default.
        self.closing_reserve = self.reserve_after(())
        self.grammar = grammar
        self.vocab_size = vocab_size
        self.name = name
        self._ll_tokenizer = ll_tokenizer(tokenizer, vocab_size)
        error = _validate(grammar, self._ll_tokenizer)
        if error:
            raise GrammarError(f"{name}: the grammar engine cannot compile it ({error})")

    def missing_keys(self, path: Path, values: Values = ()) -> set[str]:
        """The required keys not yet written in the innermost object open at ``path``, of any of the
        schemas that the string ``values`` written so far fit (a call's ``name`` picks its tool's:
        until 2026-12-07 a key another forced tool requires was let open in the tool called)."""
        fitting = [schema for schema in self._schemas if fits(schema, path, values)] or self._schemas
        return {name for schema in fitting for name in missing_keys(schema, path)}

    def reserve_after(self, path: Path) -> int:
        """:attr:`closing_reserve` once the reply stands at ``path``: the shortest JSON of the required
        keys still missing in its open objects, at least the processor's default while any is missing
        (0 once none is: what is left to write is the closers the caller counts), cached per path."""
        if path not in self._reserves:
            # the default as a floor while keys are missing (the count is an estimate: without a floor at a
            # path, 13 of 100 sampled replies ended cut where 2 had, a reviewer); none once every required
            # key is written, so that a reply's last value is not cut with tokens to spare
            sizes = [skeleton_tokens(self.tokenizer, s, path) for s in self._schemas]
            least = ConstrainedLogitsProcessor.closing_reserve if not path or any(sizes) else 0
            self._reserves[path] = max([least, *sizes])
        return self._reserves[path]

    def logits_processor(
        self,
        *,
        allow_ids: Iterable[int] = (),
        skip_ids: Iterable[int] = (),
        pad_ids: Iterable[int] = (),
        max_new_tokens: int | None = None,
        tail: str = "",
        max_time: float | None = None,
    ) -> ConstrainedLogitsProcessor:
        """A processor for ONE generation (it follows that generation's tokens); see
        :class:`ConstrainedLogitsProcessor` for the arguments."""
        return ConstrainedLogitsProcessor(
            self, allow_ids=allow_ids, skip_ids=skip_ids, pad_ids=pad_ids, max_new_tokens=max_new_tokens, tail=tail,
            max_time=max_time,
        )  # fmt: skip

    def accepts(self, text: str) -> bool:
        """Does the grammar accept ``text`` in full (for tests and checks)?"""
        matcher = self._matcher()
        ids = self.tokenizer(text, add_special_tokens=False).input_ids
        return matcher.try_consume_tokens(ids) == len(ids) and matcher.is_accepting()

    def _matcher(self) -> Any:
        matcher = _llguidance().LLMatcher(self._ll_tokenizer, self.grammar, log_level=0)
        if matcher.is_error():
            raise GrammarError(f"{self.name}: {matcher.get_error()}")
        return matcher


def _validate(grammar: str, tokenizer: Any) -> str:
    return _validate_cached(grammar, id(tokenizer), tokenizer)


@lru_cache(maxsize=256)
def _validate_cached(grammar: str, tokenizer_id: int, tokenizer: Any) -> str:
    is_error, messages = _llguidance().LLMatcher.validate_grammar_with_warnings(grammar, tokenizer)
    return messages[0] if is_error and messages else ""


class ConstrainedLogitsProcessor(LogitsProcessor):
    """Masks every token the grammar does not allow next (a transformers ``LogitsProcessor``).

    It reads the tokens added to ``input_ids`` since its last call (the first call marks
    where the generation starts) and feeds them to the matcher, except ``skip_ids``
    (``<recall>``, ``<|memory_pad|>``). ``allow_ids`` are allowed besides the grammar's
    tokens. When the grammar is complete only end-of-sequence stays allowed. One sequence
    at a time, like the recall loop. ``pad_ids`` (injected memory) do not count against
    ``max_new_tokens``, as the loop does not count them.

    With ``max_new_tokens``, the end of the budget closes what is open: once the tokens left
    are no more than what closing needs (the open string and brackets, the tokens of
    ``tail``, what the grammar writes after the JSON like ``</tool_call>``, and
    ``closing_reserve`` for required keys still missing), where the grammar allows a token
    made only of JSON closers (a quote inside a string, ``}`` or ``]`` outside), only those
    stay allowed; where it allows none, the text it forces (a missing required key, the tail)
    is written in its canonical tokens. A small model that loops inside a JSON string (greedy
    decoding does) then still ends with valid JSON instead of text cut mid-string.

    With ``max_time`` (seconds from the first call), the same closing starts once the time
    left is no more than closing would take at the pace so far; :attr:`out_of_time` then says
    the reply was closed early for time.

    Inside a JSON string that has no bracket of its own open, a token of two or more closing
    brackets (``}}``) is the model closing the JSON and leaving out the string's quote: its score
    goes to the best token the grammar allows that closes the string first (``"}``), and it is not
    allowed itself (see :meth:`_close_string_instead`). A single ``}`` or ``]`` stays text: a value
    may hold one (``"(0, 1]"``).
    """

    #: Tokens kept at the end of the budget or time beyond the open brackets (for required keys still
    #: missing), at least: a constraint made with ``schemas`` keeps room for their required keys.
    closing_reserve = 10
    #: Tokens the budget keeps beyond the shortest JSON of the required keys still missing: the
    #: separator before the next key (", "), which that JSON does not hold.
    key_slack = 2
    #: Tokens the time bound's closing may take beyond what it estimated (then :class:`ClosingLimit` stops).
    closing_slack = 32

    def __init__(
        self,
        constraint: Constraint,
        *,
        allow_ids: Iterable[int] = (),
        skip_ids: Iterable[int] = (),
        pad_ids: Iterable[int] = (),
        max_new_tokens: int | None = None,
        tail: str = "",
        max_time: float | None = None,
    ) -> None:
        if max_time is not None and not max_time > 0:
            raise ValueError(f"max_time must be a number of seconds > 0, got {max_time!r}")
        self.constraint = constraint
        self.matcher = constraint._matcher()
        self.allow_ids = sorted(set(allow_ids))
        self.skip_ids = frozenset(skip_ids)
        self.pad_ids = frozenset(pad_ids)
        self.max_new_tokens = max_new_tokens
        self.tail_tokens = len(constraint.tokenizer(tail, add_special_tokens=False).input_ids) if tail else 0
        self.generated = 0
        self.seen: int | None = None
        self.json = JsonCursor()  # where the JSON written so far stands (for closing)
        self._held: list[int] = []  # byte tokens of a character not complete yet
        self._eos = _eos_ids(constraint.tokenizer)
        self.max_time = max_time
        self.started: float | None = None
        #: Whether the time bound started closing the reply (it may be cut short).
        self.out_of_time = False
        #: When the time bound started closing: tokens written then, and how many closing may take.
        self.closing_from = self.closing_budget = 0
        quotes, brackets, after_value = closing_ids(constraint.tokenizer)  # computed once per tokenizer
        self._texts = token_texts(constraint.tokenizer)
        self._quotes, self._brackets = torch.tensor(quotes, dtype=torch.long), torch.tensor(brackets, dtype=torch.long)
        self._after_value = torch.tensor(after_value, dtype=torch.long)
        # Runs of two or more closing brackets (``}}``): inside a string, the model closing the JSON.
        runs = [i for i in brackets if len(self._texts[i].strip()) > 1 and '"' not in self._texts[i]]
        self._runs = torch.tensor(runs, dtype=torch.long)

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        if input_ids.shape[0] != 1:
            raise ValueError(f"constrained decoding follows one sequence, got a batch of {input_ids.shape[0]}")
        if self.seen is None:
            self.seen = input_ids.shape[1]
            self.started = time.monotonic()
        else:
            added = input_ids[0, self.seen :].tolist()
            self.seen = input_ids.shape[1]
            self.generated += sum(t not in self.pad_ids for t in added)
            new = [t for t in added if t not in self.skip_ids]
            if new and not self.matcher.consume_tokens(new):
                raise RuntimeError(f"{self.constraint.name}: a token outside the grammar: {self.matcher.get_error()}")
            self._follow_strings(new)
        ending = bool(self.max_new_tokens) and self.max_new_tokens - self.generated <= self._needed()
        if not ending and self._time_is_short():
            if not self.out_of_time:
                self.closing_from, self.closing_budget = self.generated, self._needed(True) + self.closing_slack
            ending = self.out_of_time = True
        allowed = self._allowed(scores.shape[-1], recall=not ending)  # no recall while closing
        if self.json.in_string and not self.json.string_depth and not ending:
            scores = self._close_string_instead(scores, allowed)
        if ending and self.matcher.is_accepting():
            # the grammar may end here: it does, rather than open what the budget has no room for (a
            # further parallel call); until 2026-12-07 such a call was opened and cut (a reviewer)
            eos = [i for i in self._eos if i < allowed.shape[-1] and allowed[0, i]]
            if eos:
                allowed = torch.zeros_like(allowed)
                allowed[0, eos] = True
                ending = False
        if ending and not self.json.string_depth and (self.json.in_key or not self.json.in_string):
            # a key opened while closing is one the reserve counted: a missing required one, never an
            # optional one (until 2026-12-07 an optional key opened there, and the reply was cut before
            # its required keys: a reviewer's LlamaIndex structured_predict with an Optional field)
            keyed = self._only_missing_keys(allowed)
            if keyed is not None:
                allowed = keyed
        if ending:
            closers = self._quotes if self.json.in_string else self._brackets
            closing = torch.zeros_like(allowed)
            closing[0, closers] = allowed[0, closers]
            if not closing.any():
                # what the grammar forces next (a missing required key, the tail), in its canonical
                # tokens: a small model would spell it a character at a time, past the reserve
                forced = [t for t in self.matcher.compute_ff_tokens()[:1] if t < allowed.shape[-1]]
                closing[0, forced] = allowed[0, forced]
            if not closing.any() and not self.json.in_string:
                # inside a number, which the grammar lets go on for ever (a small model loops on
                # digits): end it with what follows a value; until 2026-12-07 the reply was cut
                # mid-number, not JSON (a reviewer)
                closing[0, self._after_value] = allowed[0, self._after_value]
            if closing.any():
                allowed = closing
        return scores.masked_fill(~allowed.to(scores.device), -float("inf"))

    def _only_missing_keys(self, allowed: torch.Tensor) -> torch.Tensor | None:
        """``allowed`` less the tokens that begin or go on with a key that is not a missing required one
        of the innermost open object; ``None`` when none is missing (or no token would be left)."""
        names = self.constraint.missing_keys(self.path(), self.json.values())
        if not names or not self.json.in_object:
            return None
        targets = [json.dumps(name, ensure_ascii=False)[1:] for name in names]  # the key, its closing quote
        written = self.json.key_so_far
        key_next = self.json.key_next
        keep = torch.zeros_like(allowed)
        for token in allowed[0].nonzero().flatten().tolist():
            text = self._texts[token] if token < len(self._texts) else ""
            if written is None:  # a key begins after a quote: at a key's place, or after a value's comma
                quote = text.find('"')
                if quote < 0 or not (key_next or text.lstrip().startswith(",")):
                    keep[0, token] = True  # no key in it (a value, a comma, a brace)
                    continue
                key = text[quote + 1 :]
            else:
                key = written + text
            keep[0, token] = any(t.startswith(key) or key.startswith(t) for t in targets)
        return keep if keep.any() else None

    def _time_is_short(self) -> bool:
        """Is the time left no more than closing takes at the pace so far (``max_time`` only)?"""
        if not self.max_time or self.started is None or self.matcher.is_stopped():
            return False
        if self.out_of_time:
            return True
        elapsed = time.monotonic() - self.started
        pace = elapsed / max(1, self.generated)
        return self.max_time - elapsed <= pace * self._needed(for_time=True)

    def _needed(self, for_time: bool = False) -> int:
        """Tokens that closing what is open takes, at most (one per closer, the tail, the reserve).

        The time bound keeps room for all the schema's required keys (``constraint.closing_reserve``:
        it starts closing early rather than late). The budget keeps room for those the reply has not
        written yet: until 2026-12-06 it kept a fixed 10 tokens, and a reply with several required
        keys still missing was cut before they were written (invalid JSON); a reserve for every key
        whatever was written would cut short values the budget has room for."""
        # a string cut inside a character (a byte token) needs the rest of it before its quote: up to
        # 3 more bytes (the budget of a random model ended one token short of valid JSON); and the
        # end-of-sequence after it all, which makes the reply end with "stop", not "length"
        opened = int(self.json.in_string) * (4 if self.json.partial else 1) + self.json.depth + self.tail_tokens + 1
        most = opened + self.constraint.closing_reserve
        if for_time or not self.max_new_tokens or self.max_new_tokens - self.generated > most:
            return most  # not near the end: which keys are written does not matter yet
        # never more than the whole reserve
        left = self.constraint.reserve_after(self.path())
        return opened + min(self.constraint.closing_reserve, left + self.key_slack)

    def path(self) -> Path:
        """Where the reply stands: its open objects with the keys written in each, and its open arrays."""
        return self.json.path()

    def _follow_strings(self, tokens: list[int]) -> None:
        """Follow the JSON a token's text at a time; byte tokens of one character are decoded together
        (alone each is "\ufffd": a tool named "météo" was never recognised, nor a key "città", and
        closing let another tool's keys open; a reviewer, 2026-12-07)."""
        for token in tokens:
            text = self._texts[token] if token < len(self._texts) else ""
            if self._held or text.endswith("\ufffd"):
                self._held.append(token)
                text = self.constraint.tokenizer.decode(self._held)
                if text.endswith("\ufffd") and len(self._held) < 4:  # (a UTF-8 character is 4 bytes at most)
                    self.json.partial = True
                    continue
                self._held = []
            self.json.follow(text)

    def _close_string_instead(self, scores: torch.FloatTensor, allowed: torch.Tensor) -> torch.FloatTensor:
        """Scores where closing brackets inside a string close the string first; ``allowed`` loses them.

        Why: greedy decoding of the 135M default, forced to call ``get_weather``, wrote
        ``{"city": "Lisbon`` then ``}}``, which is text inside a string, so the grammar let it through
        and the value went on (``'Lisbon}}</tool'`` until 2026-12-06), though ``"}`` came next in
        the model's choice. Only where the grammar allows a token closing the string (a value may
        end here) and the string opened no bracket of its own (a value holding ``{}`` keeps them).
        Only runs of two or more: a single ``}`` or ``]``, or ``}"``, is a value's own (a review of
        the first version, which refused them too, cut ``"(0, 1]"`` to ``"(0, 1"`` and ``"a}b"`` to
        ``"a"``). A value ending in ``]]`` or ``}}`` without an opener is still cut there.
        """
        row = allowed[0]
        brackets, quotes = self._runs[row[self._runs]], self._quotes[row[self._quotes]]
        if not len(brackets) or not len(quotes):
            return scores
        scores = scores.clone()
        values = scores[0]
        quote = quotes.to(values.device)[values[quotes.to(values.device)].argmax()]
        values[quote] = torch.maximum(values[quote], values[brackets.to(values.device)].max())
        row[brackets] = False
        return scores

    def _allowed(self, width: int, recall: bool = True) -> torch.Tensor:
        words = np.frombuffer(self.matcher.compute_bitmask(), dtype=np.uint8)
        bits = np.unpackbits(words, bitorder="little")[:width].astype(bool)
        if bits.shape[0] < width:  # logits wider than the tokenizer: the extra ids are never text
            bits = np.concatenate([bits, np.zeros(width - bits.shape[0], dtype=bool)])
        allowed = torch.from_numpy(bits)[None, :]
        if recall and self.allow_ids and not self.matcher.is_stopped():
            allowed[0, self.allow_ids] = True
        return allowed

    @property
    def done(self) -> bool:
        """The grammar has matched a complete text."""
        return self.matcher.is_accepting()


class ClosingLimit(StoppingCriteria):
    """Stops a constrained reply whose time bound started closing it, once closing took more
    tokens than it may (``processor.closing_budget``): the reply then ends within its
    ``max_time`` plus those few tokens, and is never cut by the clock mid-JSON (a grammar that
    is complete ends the reply before, with end-of-sequence)."""

    def __init__(self, processor: ConstrainedLogitsProcessor) -> None:
        self.processor = processor

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor, **kwargs: Any) -> torch.BoolTensor:
        p = self.processor
        stop = p.out_of_time and p.generated - p.closing_from >= p.closing_budget
        return torch.full((input_ids.shape[0],), stop, dtype=torch.bool, device=input_ids.device)
