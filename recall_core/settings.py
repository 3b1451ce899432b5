"""Settings, checked in one place: generation options, their aliases, ranges and stop strings.

``RecallGenerator.generate`` and both adapters read generation options through
:func:`generation_options` and :func:`stop_strings`, so a setting means the same thing
wherever it is given, and a bad value fails the same way: a ``ValueError`` that names the
setting as it was written and its allowed range. The rules:

* ``max_tokens`` is ``max_new_tokens``, and ``timeout`` is ``max_time`` (seconds of decoding);
* ``temperature`` 0 decodes greedily; above 0 it samples, unless ``do_sample`` says otherwise;
* stop strings come from ``stop`` and ``stop_strings`` together, each a non-empty string;
* one decoding path, greedy or sampled, on the KV cache, from token ids: ``num_beams`` and
  ``num_return_sequences`` must be 1, ``use_cache`` true, and the options of another decoding
  method (contrastive search, DoLa, assisted generation, token healing) or ``inputs_embeds``
  are refused (:data:`ONE_PATH`; :func:`check_one_path` for what reaches the loop itself).

:class:`~recall_core.RecallConfig` checks its own fields with the helpers at the end.
"""

from __future__ import annotations

import copy
import math
import numbers
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

#: Names accepted for LangChain / OpenAI habits, and the ``generate()`` option each one sets.
ALIASES: Mapping[str, str] = {"max_tokens": "max_new_tokens", "timeout": "max_time"}


@dataclass(frozen=True)
class Range:
    """An allowed range of numbers, and how an error message says it."""

    allowed: str
    ok: Callable[[Any], bool]
    integer: bool = False


#: The smallest temperature above 0 that is sampled with (below it, the scaled logits overflow).
MIN_TEMPERATURE = 1e-4

#: ``generate()`` options checked here, so a bad value fails with its name and range before
#: any work is done (transformers checks some of them only deep inside the first step).
RANGES: Mapping[str, Range] = {
    # Below the floor the scaled logits overflow (1e-320 ended in a RuntimeError inside sampling),
    # and an infinite one samples uniformly: neither is a temperature anybody means.
    "temperature": Range(">= 0 (0: greedy; otherwise finite and at least 1e-4)",
                         lambda v: v == 0 or MIN_TEMPERATURE <= v < math.inf),
    "top_p": Range("in (0, 1]", lambda v: 0 < v <= 1),
    "min_p": Range("in [0, 1]", lambda v: 0 <= v <= 1),
    "top_k": Range("an int >= 0", lambda v: v >= 0, integer=True),
    "repetition_penalty": Range("> 0", lambda v: v > 0),
    "max_new_tokens": Range("an int >= 1", lambda v: v >= 1, integer=True),
    "max_length": Range("an int >= 1", lambda v: v >= 1, integer=True),
    "max_time": Range("a number of seconds > 0", lambda v: v > 0),
    "no_repeat_ngram_size": Range("an int >= 0", lambda v: v >= 0, integer=True),
}

#: ``generate()`` options that are flags: a string ("false") or a number was read as true (a
#: reviewer, 2026-12-07: ``do_sample="false"`` sampled), so only ``True`` and ``False`` are taken.
FLAGS = frozenset({"do_sample", "return_dict_in_generate", "output_scores", "output_logits", "output_attentions",
                   "output_hidden_states", "renormalize_logits", "remove_invalid_values"})  # fmt: skip


def _unset(value: Any) -> bool:
    return False  # ``None`` (unset) is always accepted; any value is refused


@dataclass(frozen=True)
class OnePath:
    """What recall accepts for an option that would leave its one decoding path, and why."""

    allowed: str
    why: str
    ok: Callable[[Any], bool] = _unset


_ANOTHER_METHOD = "it asks transformers for another decoding method, which recall's loop does not follow"
#: Options that would leave the one decoding path recall follows (greedy or sampling, one
#: sequence, on the KV cache, from token ids). Before 2026-12-06 those after
#: ``num_return_sequences`` were taken and ignored, or (``use_cache=False``) gave other tokens.
ONE_PATH: Mapping[str, OnePath] = {
    "num_beams": OnePath("1", "one decoding path", lambda v: v == 1),
    "num_return_sequences": OnePath("1", "one decoding path", lambda v: v == 1),
    "use_cache": OnePath("True", "recall decodes on the KV cache: notes go into it, markers are taken back from it",
                         lambda v: v is True),
    "penalty_alpha": OnePath("unset or 0", f"contrastive search: {_ANOTHER_METHOD}", lambda v: v == 0),
    "dola_layers": OnePath("unset", f"DoLa decoding: {_ANOTHER_METHOD}"),
    "assistant_model": OnePath("unset", f"assisted generation: {_ANOTHER_METHOD}"),
    "prompt_lookup_num_tokens": OnePath("unset", f"prompt lookup (assisted generation): {_ANOTHER_METHOD}"),
    "assistant_early_exit": OnePath("unset", f"self-speculative decoding (assisted generation): {_ANOTHER_METHOD}"),
    "use_mtp": OnePath("False", f"multi-token prediction (assisted generation): {_ANOTHER_METHOD}", lambda v: v is False),
    "token_healing": OnePath("False", "transformers does not pass the tokenizer it needs on to recall's loop",
                             lambda v: v is False),
    "inputs_embeds": OnePath("unset", "recall runs the prompt from its token ids, among which the notes go: "
                                      "pass the ids"),
    # transformers sizes a static cache for the prompt and max_new_tokens: the first notes injected
    # ran past its end (an IndexError mid-reply until 2026-12-07, a reviewer).
    "cache_implementation": OnePath("unset, 'dynamic', 'offloaded' or 'quantized'",
                                    "recall injects notes into the cache, which a cache of fixed size cannot hold",
                                    lambda v: v in ("dynamic", "offloaded", "quantized")),
    "force_words_ids": OnePath("unset", f"constrained beam search: {_ANOTHER_METHOD}"),
    "constraints": OnePath("unset", f"constrained beam search: {_ANOTHER_METHOD}"),
}  # fmt: skip


def generation_options(given: Mapping[str, Any]) -> dict[str, Any]:
    """``given`` as ``generate()`` options: aliases resolved, ``temperature`` read, values checked.

    ``None`` values are kept (transformers reads them as "unset"). NumPy numbers become Python
    ones (``max_new_tokens=np.int64(5)``: transformers takes them; until 2026-12-07 they were
    refused). Giving an option and its alias with different values raises ``ValueError``. Stop
    strings are left where they are (see :func:`stop_strings`).
    """
    options: dict[str, Any] = {}
    written: dict[str, str] = {}
    for name, value in given.items():
        option, value = option_name(name), plain_number(value)
        if option in options and options[option] != value:
            raise ValueError(f"give {written[option]} or {name}, not both ({options[option]!r} vs {value!r})")
        _check(name, option, value)
        if option in FLAGS and value is not None:
            value = bool(value)  # 0, 1 and NumPy's bools as transformers reads them (do_sample=0 is greedy)
        options[option], written[option] = value, name
    temperature = options.get("temperature")
    if temperature is not None:
        if temperature == 0:  # greedy, whatever do_sample says: there is nothing to sample at 0
            del options["temperature"]
            options["do_sample"] = False
        else:
            options["temperature"] = float(temperature)
            options.setdefault("do_sample", True)
    if options.get("max_time") is not None:
        options["max_time"] = float(options["max_time"])
    return options


def call_options(defaults: Mapping[str, Any], given: Mapping[str, Any]) -> dict[str, Any]:
    """One call's ``generate()`` options: ``given`` over the generator's ``defaults``, as
    transformers reads a call that sets them itself.

    transformers lets keyword arguments override a ``generation_config``'s fields, so the
    defaults (``max_new_tokens=256, do_sample=False``) would overrule the caller's config: a
    default is dropped where the call's config sets the same option (a field that differs from a
    fresh ``GenerationConfig``, as docs/configuration.md says; from 2026-12-06 to 2026-12-07 a field
    equal to the model's own generation config did not count, so ``GenerationConfig(do_sample=True)``
    was greedy on a model that samples by default, as Qwen2.5 and Llama 3 ship, a reviewer found). A ``max_length`` the call sets, as a keyword or in its config,
    drops the default ``max_new_tokens``, which transformers would let win. The config's fields are
    range-checked as keywords are, and its ``stop_strings`` move to the keyword (recall's own
    criteria cut them: transformers needs a tokenizer for them that it does not pass on here).
    """
    options = generation_options(given)
    config = options.get("generation_config")
    set_by_call = set(options)
    if config is not None:
        in_config = config_fields(config)
        generation_options({k: v for k, v in in_config.items() if k != "stop_strings"})  # ranges, one path
        set_by_call |= set(in_config)
        if config.stop_strings is not None:
            config = copy.deepcopy(config)  # the caller's own config is left as it is
            options["stop_strings"] = stop_strings(options.get("stop_strings"), config.stop_strings)
            config.stop_strings = None
            options["generation_config"] = config
    kept = {name: value for name, value in generation_options(defaults).items() if name not in set_by_call}
    if "max_length" in set_by_call and "max_new_tokens" not in set_by_call:
        kept.pop("max_new_tokens", None)
    greedy = options.get("do_sample", in_config.get("do_sample") if config is not None else None) is False
    if greedy:  # a greedy call (temperature=0, or a config's do_sample=False): the defaults' sampling options go,
        # or transformers warns that options the caller never gave are ignored (until 2026-12-07: a reviewer)
        kept = {name: value for name, value in kept.items() if name not in SAMPLING_ONLY}
    return {**kept, **options}


#: The options only sampling reads (transformers warns of them in a greedy call).
SAMPLING_ONLY = frozenset({"temperature", "top_p", "top_k", "top_h", "min_p", "typical_p", "epsilon_cutoff", "eta_cutoff"})


def generate_keywords(options: Mapping[str, Any], cache_given: bool = False) -> dict[str, Any]:
    """``options`` as ``model.generate()`` takes them: where the call gives a ``generation_config``,
    the generation options go into a copy of it (over its fields, as transformers puts keywords),
    the rest stay keywords. transformers 5 deprecates a config passed beside generation keywords:
    every call that gave one warned about keywords the caller never passed (recall adds ``use_cache``
    and ``return_dict_in_generate`` itself; a reviewer, 2026-12-07).

    ``cache_given``: the call runs on a cache of its own (a session's, a first pass's), which a
    ``cache_implementation`` asked for beside it cannot replace (only growing ones pass
    :data:`ONE_PATH`): it is left out, where transformers refused the pair ("Passing both").
    """
    options = dict(options)
    if cache_given:
        options.pop("cache_implementation", None)
    config = options.pop("generation_config", None)
    if config is None:
        return options
    merged = copy.deepcopy(config)  # the caller's own is left as it is
    if cache_given:
        merged.cache_implementation = None
    rest = merged.update(**options)
    return {**rest, "generation_config": merged}


def reply_limits(options: dict[str, Any], prompt_length: int) -> tuple[int | None, float | None]:
    """The new tokens and seconds a reply may take, as transformers reads them (a keyword, else the
    call's ``generation_config``; ``max_length`` less the prompt), for a constrained reply's closing;
    ``max_time`` is taken out of ``options`` (and out of a copy of their config): the closing keeps to
    it, where transformers would cut the reply before it closed. Until 2026-12-07 only the keywords
    were read, and a budget or time in a config cut a constrained reply mid-JSON (a reviewer)."""
    config = options.get("generation_config")
    max_time = options.pop("max_time", None)
    new, length = options.get("max_new_tokens"), options.get("max_length")
    if config is not None:
        new = new if new is not None else config.max_new_tokens
        length = length if length is not None else config.max_length
        if config.max_time is not None:
            max_time = max_time if max_time is not None else config.max_time
            config = copy.deepcopy(config)  # the caller's own is left as it is
            config.max_time = None
            options["generation_config"] = config
    if new is None and length is not None and ("max_length" in options or config is not None):
        new = max(1, int(length) - prompt_length)
    return new, max_time


def check_model_inputs(input_ids: Any, position_ids: Any, attention_mask: Any, cache: Any, vocab_size: int) -> None:
    """``ValueError`` naming the argument unless ``input_ids`` is an integer tensor ``[1, L]`` of ids
    below ``vocab_size``; ``position_ids`` and ``attention_mask``, where given, tensors ``[1, L]``
    (integer positions >= 0; a mask of 0s and 1s, of any type); and a cache, where given, a transformers
    ``Cache`` of one row. Until 2026-12-07 bad ones failed deep in torch (``IndexError``,
    ``AttributeError``), or a wrong-length mask or positions were taken as all ones and 0..L-1 (a reviewer)."""
    import torch
    from transformers import Cache

    if not isinstance(input_ids, torch.Tensor) or input_ids.dim() != 2 or input_ids.shape[0] != 1 \
            or input_ids.shape[1] < 1 or input_ids.dtype.is_floating_point or input_ids.dtype == torch.bool:  # fmt: skip
        raise ValueError(f"input_ids must be an integer tensor of shape [1, L], got {_described(input_ids)}")
    if int(input_ids.min()) < 0 or int(input_ids.max()) >= vocab_size:
        raise ValueError(f"input_ids must be ids in 0-{vocab_size - 1} (the model's vocabulary), got "
                         f"{int(input_ids.min())}-{int(input_ids.max())}")  # fmt: skip
    for name, value in (("position_ids", position_ids), ("attention_mask", attention_mask)):
        if value is None:
            continue
        kind = "an integer" if name == "position_ids" else "a"  # transformers takes a float mask of 0s and 1s
        if not isinstance(value, torch.Tensor) or tuple(value.shape) != tuple(input_ids.shape) \
                or (name == "position_ids" and value.dtype.is_floating_point):  # fmt: skip
            raise ValueError(f"{name} must be {kind} tensor of input_ids' shape {list(input_ids.shape)}, "
                             f"got {_described(value)}")  # fmt: skip
        if name == "position_ids" and int(value.min()) < 0:
            raise ValueError(f"position_ids must be >= 0, got {int(value.min())}")
        if name == "attention_mask" and not bool(((value == 0) | (value == 1)).all()):
            raise ValueError("attention_mask must hold only 0s and 1s")
    if cache is not None:
        if not isinstance(cache, Cache):
            raise ValueError(f"past_key_values must be a transformers Cache (a DynamicCache), got {type(cache).__name__}")
        keys = getattr((getattr(cache, "layers", None) or [None])[0], "keys", None)
        if isinstance(keys, torch.Tensor) and keys.dim() == 4 and keys.shape[0] != 1:
            raise ValueError(f"past_key_values must hold one row (recall decodes one sequence), got {keys.shape[0]}")


def _described(value: Any) -> str:
    shape = getattr(value, "shape", None)
    return f"{type(value).__name__} of shape {list(shape)} ({getattr(value, 'dtype', '')})" if shape is not None \
        else type(value).__name__  # fmt: skip


def config_fields(config: Any) -> dict[str, Any]:
    """The generation options a ``GenerationConfig`` sets: its fields that differ from a fresh
    ``GenerationConfig`` and are not ``None``."""
    base = type(config)().to_dict()
    return {name: value for name, value in config.to_dict().items()
            if name in generation_option_names() and value is not None and value != base.get(name)}  # fmt: skip


def stop_strings(*sources: str | Sequence[str] | None) -> list[str]:
    """The stop strings of ``stop=`` and ``stop_strings=`` (each ``None``, a string or strings), checked."""
    stops: list[str] = []
    for source in sources:
        if source is not None:
            # stop=5 was a TypeError that named nothing (a reviewer); a one-shot iterator would be used
            # up by the first check and then stop nothing; bytes would be read as numbers
            if not isinstance(source, (str, Iterable)) or isinstance(source, (Iterator, bytes)):
                raise ValueError(f"stop strings must be a string or a list of non-empty strings, got {source!r}")
            stops.extend([source] if isinstance(source, str) else list(source))  # a set too, as before
    if any(not isinstance(s, str) or not s for s in stops):
        raise ValueError(f"stop strings must be non-empty strings, got {stops!r}")
    return stops


def check_utf8(text: str, field: str) -> str:
    """``text`` if it encodes as UTF-8, else ``ValueError`` naming ``field``: a lone surrogate (what
    Python makes of undecodable bytes) reached the tokenizer and failed there with a ``TypeError``
    that named nothing, until 2026-12-07 (a reviewer; the memory refused it by name already)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(f"{field} is not valid UTF-8 text (character {text[exc.start]!r} at position {exc.start}): "
                         "it was probably decoded from non-UTF-8 bytes") from None  # fmt: skip
    return text


def check_call_objects(streamer: Any, stopping_criteria: Any, tools: Any, on_recall: Any = None,
                       logits_processor: Any = None) -> None:  # fmt: skip
    """``ValueError`` naming the argument for a ``streamer`` without ``put()`` and ``end()``, and for
    ``stopping_criteria`` or ``tools`` that are not lists (until 2026-12-07 each failed deep inside the
    call: ``'int' object is not iterable``, an ``AttributeError`` at the first token; a reviewer)."""
    if streamer is not None and not (callable(getattr(streamer, "put", None)) and callable(getattr(streamer, "end", None))):
        raise ValueError(f"streamer must be a transformers streamer (with put() and end()), got {type(streamer).__name__}")
    if on_recall is not None and not callable(on_recall):
        raise ValueError(f"on_recall must be a callable taking a Recall, or None, got {type(on_recall).__name__}")
    for name, value, what in (("stopping_criteria", stopping_criteria, "transformers StoppingCriteria"),
                              ("tools", tools, "tool dicts (OpenAI's shape)"),
                              ("logits_processor", logits_processor, "transformers LogitsProcessor")):  # fmt: skip
        if value is not None and (isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable)):
            raise ValueError(f"{name} must be a list of {what}, got {type(value).__name__}")


def plain_number(value: Any) -> Any:
    """A NumPy number (``np.int64(5)``, ``np.float32(0.7)``) as the Python number it holds; any
    other value as it is (``np.bool_`` too: a flag is no number)."""
    if isinstance(value, numbers.Number) and not isinstance(value, (int, float, complex)) and hasattr(value, "item"):
        return value.item()
    return value


def option_name(name: str) -> str:
    """The ``generate()`` option a name sets: ``max_tokens`` -> ``max_new_tokens``; others are their own."""
    return ALIASES.get(name, name)


def option_value(given: Mapping[str, Any], option: str, default: Any = None) -> Any:
    """The value ``given`` sets for ``option``, under its own name or an alias (unchecked)."""
    for name, value in given.items():
        if option_name(name) == option:
            return value
    return default


@cache
def generation_option_names() -> frozenset[str]:
    """Every name :func:`generation_options` knows: ``GenerationConfig`` fields and the aliases."""
    from transformers import GenerationConfig  # here: importing recall_core stays light

    names = {name for name in vars(GenerationConfig()) if not name.startswith("_")}
    return frozenset((names - {"transformers_version"}) | set(ALIASES))


def check_option_names(owner: str, given: Iterable[str], other_arguments: Iterable[str] = ()) -> None:
    """Raise ``TypeError`` naming every name that is neither a generation option nor one of ``other_arguments``.

    transformers would refuse them too, but only after the prompt is tokenized and with a
    message about ``model_kwargs``; this says which call got what, before any work is done.
    """
    other = set(other_arguments)
    unknown = sorted(set(given) - generation_option_names() - other)
    if unknown:
        raise TypeError(
            f"{owner} got unexpected keyword argument(s) {', '.join(map(repr, unknown))}. "
            f"It accepts {', '.join(sorted(other)) + ' and ' if other else ''}any transformers generate() option "
            "(max_new_tokens / max_tokens, temperature, top_p, top_k, min_p, repetition_penalty, do_sample, ...)."
        )


def check_defaults(defaults: Mapping[str, Any]) -> None:
    """A generator's ``generation_defaults``: known option names and values in range, else ``ValueError``."""
    try:
        check_option_names("generation_defaults", defaults, ("stop",))
    except TypeError as error:  # a mapping's keys: a bad value, not a bad keyword
        raise ValueError(str(error)) from None
    generation_options(defaults)
    # stop strings too: [""] or 5 passed the constructor and failed at the first call (a reviewer, 2026-12-07)
    stop_strings(defaults.get("stop"), defaults.get("stop_strings"))


def generator_defaults(given: Mapping[str, Any] | None) -> dict[str, Any]:
    """A generator's ``generation_defaults`` (default: 256 new tokens, greedy), checked
    (:func:`check_defaults`), with ``stop`` read as a call's ``stop=`` is: as stop strings (until
    2026-12-07 it was refused, where the docs said the defaults are read as a call's options: a reviewer)."""
    defaults = dict(given or {"max_new_tokens": 256, "do_sample": False})
    check_defaults(defaults)  # bad defaults fail when the generator is made, not at the first call
    if "stop" in defaults:
        defaults["stop_strings"] = stop_strings(defaults.pop("stop"), defaults.get("stop_strings")) or None
    return defaults


def check_one_path(generation_config: Any, model_kwargs: Mapping[str, Any]) -> None:
    """What ``generate()`` hands ``recall_generate``: the call's merged ``generation_config`` and
    ``model_kwargs`` hold none of :data:`ONE_PATH`'s refused values, and decode greedily or by
    sampling; else ``ValueError`` naming the option. (``assistant_model`` and ``tokenizer`` never
    reach the loop: transformers keeps them. Token healing runs before it.)"""
    for name in ONE_PATH:
        value = model_kwargs.get(name) if name == "inputs_embeds" else getattr(generation_config, name, None)
        try:
            _check(name, name, value)
        except ValueError as error:  # a model's saved generation_config may hold it, not the call
            raise ValueError(f"{error} (in the call's options or the model's generation_config: pass "
                             f"{name}= to the call to override)") from None
    mode = generation_config.get_generation_mode()
    mode = getattr(mode, "value", mode)
    if mode not in ("greedy_search", "sample"):
        raise ValueError(f"recall decodes greedily or by sampling (do_sample), but the call's generation options "
                         f"(or the model's generation_config) ask transformers for {mode}: unset the options of "
                         "that method")  # fmt: skip


def _check(name: str, option: str, value: Any) -> None:
    if option in RANGES and value is not None:
        in_range(name, value, RANGES[option])
    numpy_bool = type(value).__module__ == "numpy" and type(value).__name__ in ("bool", "bool_")
    zero_or_one = type(value) is int and value in (0, 1)  # transformers takes them (a reviewer)
    if option in FLAGS and value is not None and not isinstance(value, bool) and not numpy_bool and not zero_or_one:
        raise ValueError(f"{name} must be True or False, got {value!r}")
    path = ONE_PATH.get(option)
    if path is not None and value is not None and not path.ok(value):
        shown = f"a {type(value).__name__}" if name in ("assistant_model", "inputs_embeds") else repr(value)
        raise ValueError(f"{name} must be {path.allowed} with recall ({path.why}), got {shown}")


# --------------------------------------------------------------------------- field checks
def one_of(name: str, value: object, allowed: Sequence[str]) -> None:
    """``value`` is one of ``allowed`` (a ``Literal``'s ``get_args``), else ``ValueError``."""
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}, got {value!r}")


def int_at_least(name: str, value: object, low: int) -> None:
    """``value`` is an int (not a bool) ``>= low``, else ``ValueError``. (The memory's
    ``check_count`` says the same; it is not imported: that loads the memory package with this one.)"""
    if not isinstance(value, int) or isinstance(value, bool) or value < low:
        raise ValueError(f"{name} must be an int >= {low}, got {value!r}")


def in_range(name: str, value: object, limits: Range) -> None:
    """``value`` is a number (not a bool) within ``limits``, else ``ValueError`` naming ``name``."""
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if not number or (limits.integer and not isinstance(value, int)) or not limits.ok(value):
        raise ValueError(f"{name} must be {limits.allowed}, got {value!r}")
