"""Framework-neutral glue shared by the LangChain and LlamaIndex adapters.

Nothing here imports LangChain or LlamaIndex, and nothing here is engine logic: it loads
models once per process, maps the ecosystems' standard sampling parameters onto
``RecallGenerator.generate`` arguments, checks per-call keyword arguments, picks the
memory for a call, turns results into plain dicts, and runs the engine off the event loop.
:class:`RecallAdapterMixin` holds what the adapter classes do with their settings (the
lazily built engine, ``from_model``, the checks at init, one call's ``generate`` arguments),
so that each adapter package keeps only its framework's glue.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, ClassVar, TypeVar

from .config import RecallConfig
from .generator import RecallGenerator
from .models import DEFAULT_MODEL_NAME, RECALL_TOKEN, load_model
from .types import Memory, RecallResult

#: What the adapters report as provider in traces (LangSmith ``ls_provider``).
PROVIDER = "recall"

#: Aliases ``RecallGenerator.generate`` accepts besides the ``generate()`` option names.
ENGINE_ALIASES = frozenset({"max_tokens"})

_GENERATION_ARGUMENTS: frozenset[str] | None = None


def generation_arguments() -> frozenset[str]:
    """Names ``model.generate()`` accepts as generation options (``GenerationConfig`` fields)."""
    global _GENERATION_ARGUMENTS
    if _GENERATION_ARGUMENTS is None:
        from transformers import GenerationConfig

        names = {name for name in vars(GenerationConfig()) if not name.startswith("_")}
        _GENERATION_ARGUMENTS = frozenset(names - {"transformers_version"})
    return _GENERATION_ARGUMENTS


def check_call_kwargs(owner: str, kwargs: Mapping[str, Any], adapter_arguments: Iterable[str] = ()) -> None:
    """Raise ``TypeError`` naming every keyword argument neither the engine nor the adapter knows.

    transformers would refuse them too, but only after the prompt is tokenized and with a
    message about ``model_kwargs``; this says which call got what, before any work is done.
    """
    known = generation_arguments() | ENGINE_ALIASES | set(adapter_arguments)
    unknown = sorted(set(kwargs) - known)
    if unknown:
        raise TypeError(
            f"{owner} got unexpected keyword argument(s) {', '.join(map(repr, unknown))}. "
            f"It accepts {', '.join(sorted(adapter_arguments))} and any transformers generate() option "
            "(max_new_tokens / max_tokens, temperature, top_p, top_k, min_p, repetition_penalty, do_sample, ...)."
        )


def sampling_kwargs(
    *,
    temperature: float | None = None,
    max_tokens: int | None = None,
    top_p: float | None = None,
    top_k: int | None = None,
    repetition_penalty: float | None = None,
    timeout: float | None = None,
) -> dict[str, Any]:
    """Map the ecosystems' standard parameters onto ``generate()`` arguments.

    ``temperature`` 0 (or ``None``, the engine default) decodes greedily; above 0 samples.
    ``timeout`` becomes transformers' ``max_time`` (seconds of decoding). ``None`` values
    are left out so the engine's defaults apply.
    """
    kwargs: dict[str, Any] = {}
    if temperature is not None:
        if isinstance(temperature, bool) or not isinstance(temperature, (int, float)) or temperature < 0:
            raise ValueError(f"temperature must be a number >= 0, got {temperature!r}")
        if temperature > 0:
            kwargs.update(do_sample=True, temperature=float(temperature))
        else:
            kwargs["do_sample"] = False
    if max_tokens is not None:
        kwargs["max_new_tokens"] = max_tokens
    if top_p is not None:
        kwargs["top_p"] = top_p
    if top_k is not None:
        kwargs["top_k"] = top_k
    if repetition_penalty is not None:
        kwargs["repetition_penalty"] = repetition_penalty
    if timeout is not None:
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
            raise ValueError(f"timeout must be a number of seconds > 0, got {timeout!r}")
        kwargs["max_time"] = float(timeout)
    return kwargs


def normalize_generation_kwargs(kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """Per-call kwargs with ``temperature`` handled like :func:`sampling_kwargs` and aliases resolved."""
    out = dict(kwargs)
    if "max_tokens" in out:
        out["max_new_tokens"] = out.pop("max_tokens")
    if "temperature" in out and "do_sample" not in out:
        out.update(sampling_kwargs(temperature=out.pop("temperature")))
    if "timeout" in out:
        out.update(sampling_kwargs(timeout=out.pop("timeout")))
    return out


# --------------------------------------------------------------------------- models
_MODELS: dict[tuple[Any, ...], tuple[Any, Any]] = {}
_MODELS_LOCK = threading.Lock()
_KEY_LOCKS: dict[tuple[Any, ...], threading.Lock] = {}


def shared_model(
    name_or_path: str | None = None,
    *,
    device: str | None = None,
    dtype: str | None = None,
    **model_kwargs: Any,
) -> tuple[Any, Any]:
    """``recall_core.load_model(...)``, loaded once per process for the same arguments.

    Adapters are cheap to construct (LangChain builds them per request, tests build them in
    loops); the model behind them is not, so instances that name the same model share it.
    Inference does not change a model, so sharing it between threads is safe.
    """
    key = (name_or_path, device, str(dtype), tuple(sorted((k, repr(v)) for k, v in model_kwargs.items())))
    with _MODELS_LOCK:
        if key in _MODELS:
            return _MODELS[key]
        key_lock = _KEY_LOCKS.setdefault(key, threading.Lock())
    with key_lock:  # one loader per key; others wait for it instead of loading again
        with _MODELS_LOCK:
            if key in _MODELS:
                return _MODELS[key]
        loaded = load_model(name_or_path, device=device, dtype=dtype, **model_kwargs)
        with _MODELS_LOCK:
            _MODELS[key] = loaded
        return loaded


def model_display_name(name_or_path: str | None, generator: RecallGenerator | None = None) -> str:
    """A readable model name for traces: the given name, the loaded model's, or the default's."""
    if name_or_path:
        return str(name_or_path)
    if generator is not None:
        name = getattr(generator.model.config, "name_or_path", None) or getattr(
            generator.model, "name_or_path", None
        )
        if name:
            name = str(name).rstrip("/")
            return DEFAULT_MODEL_NAME if name.endswith(DEFAULT_MODEL_NAME) else name
        return type(generator.model).__name__
    return DEFAULT_MODEL_NAME


def build_generator(
    *,
    generator: RecallGenerator | None,
    name_or_path: str | None,
    device: str | None,
    dtype: str | None,
    config: RecallConfig | None,
) -> RecallGenerator:
    """The adapter's generator: the one given, or one over the shared model named."""
    if generator is not None:
        return generator
    model, tokenizer = shared_model(name_or_path, device=device, dtype=dtype)
    return RecallGenerator(model, tokenizer, config=config)


# --------------------------------------------------------------------------- memory
def resolve_memory(memory: Memory | None, store: Any, user_id: str | None) -> Memory | None:
    """The memory searched at ``<recall>``: ``memory`` itself, or ``store.for_user(user_id)``."""
    if memory is not None:
        return memory
    if store is None:
        return None
    if user_id is None:
        raise ValueError(
            "a memory store is attached but no user_id was given: pass user_id= (at init or per call)"
        )
    return store.for_user(user_id)


def check_generator(generator: Any) -> None:
    if generator is not None and not isinstance(generator, RecallGenerator):
        raise TypeError(f"generator must be a recall_core.RecallGenerator, got {type(generator).__name__}")


def check_memory_arguments(memory: Any, store: Any) -> None:
    if memory is not None and store is not None:
        raise ValueError("give either memory= (anything with search()) or store= with user_id=, not both")
    if memory is not None and not callable(getattr(memory, "search", None)):
        raise TypeError(f"memory must have a search(query, k) method, got {type(memory).__name__}")
    if store is not None and not callable(getattr(store, "for_user", None)):
        raise TypeError(
            f"store must be a recall_core.memory.MemoryStore (with for_user()), got {type(store).__name__}"
        )


def write_turns(
    store: Any, user_id: str, turns: Sequence[tuple[str, str]], session_id: str | None = None
) -> list[str]:
    """Write ``(role, content)`` turns for ``user_id`` through the store's ``MemoryWriter``; return the ids.

    ``<recall>`` markers are taken out first: they are instructions to the loop, not memory.
    """
    ids: list[str] = []
    writer = store.writer
    for role, content in turns:
        text = strip_marker(content).strip()
        if text:
            ids.extend(writer.add_turn(user_id, role, text, session_id=session_id))
    return ids


def strip_marker(text: str) -> str:
    return text.replace(RECALL_TOKEN, "")


def mark_for_recall(prompt: str, config: RecallConfig) -> str:
    """A raw text prompt under the ``"auto"`` policy: ``<recall>`` at its end, unless it has one.

    (Chat messages need no marker here: the engine places it by ``recall_position``.)
    """
    if config.recall_policy == "auto" and RECALL_TOKEN not in prompt:
        return prompt + RECALL_TOKEN
    return prompt


# --------------------------------------------------------------------------- results
def recall_dicts(result: RecallResult) -> list[dict[str, Any]]:
    """The recall trace as plain dicts (JSON-friendly), with ``injected`` spelled out."""
    out = []
    for recall in result.recalls:
        item = asdict(recall)
        item["candidates"] = [list(c) for c in recall.candidates]
        item["injected"] = recall.injected
        out.append(item)
    return out


def usage_dict(result: RecallResult) -> dict[str, int]:
    usage = result.usage
    return {
        "prompt_tokens": usage.prompt_tokens,
        "injected_tokens": usage.injected_tokens,
        "generated_tokens": usage.generated_tokens,
        "total_tokens": usage.total_tokens,
    }


# --------------------------------------------------------------------------- async
async def run_in_thread(fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
    """Run blocking engine work in the default executor, with the caller's context variables."""
    return await asyncio.to_thread(fn, *args, **kwargs)


class AsyncRecallStream:
    """Async iterator over the text pieces of ``generator.stream(...)``; ``result`` is set at the end.

    The engine's stream runs in a worker thread that hands each piece to the event loop
    through an ``asyncio.Queue``, so awaiting the next piece never blocks the loop.
    """

    _PIECE, _DONE, _ERROR = range(3)

    def __init__(self, generator: RecallGenerator, prompt: Any, kwargs: Mapping[str, Any]) -> None:
        self.result: RecallResult | None = None
        self._generator = generator
        self._prompt = prompt
        self._kwargs = dict(kwargs)

    def __aiter__(self) -> AsyncIterator[str]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[str]:
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[int, Any]] = asyncio.Queue()
        stream = self._generator.stream(self._prompt, **self._kwargs)

        def hand_over(kind: int, value: Any) -> None:
            try:
                loop.call_soon_threadsafe(queue.put_nowait, (kind, value))
            except RuntimeError:  # the loop was closed while generating: nobody is listening
                pass

        def work() -> None:
            try:
                for piece in stream:
                    hand_over(self._PIECE, piece)
                hand_over(self._DONE, stream.result)
            except BaseException as error:  # handed to the awaiting side
                hand_over(self._ERROR, error)

        context = contextvars.copy_context()
        threading.Thread(target=context.run, args=(work,), name="recall-astream", daemon=True).start()
        while True:
            kind, value = await queue.get()
            if kind == self._PIECE:
                yield value
            elif kind == self._DONE:
                self.result = value
                return
            else:
                raise value


# --------------------------------------------------------------------------- adapter classes
@dataclass
class PreparedCall:
    """Everything one engine call needs, resolved from the instance and the call's kwargs."""

    kwargs: dict[str, Any]
    user_id: str | None
    session_id: str | None
    config: RecallConfig


_Adapter = TypeVar("_Adapter", bound="RecallAdapterMixin")


class RecallAdapterMixin:
    """What an adapter class does with its settings, whatever its framework (a mixin).

    The pydantic class mixing it in declares the fields ``model_name``, ``generator``,
    ``device``, ``dtype``, ``store``, ``user_id``, ``memory``, ``recall``, ``recall_config``,
    ``temperature``, ``top_p``, ``top_k``, ``repetition_penalty``, ``stop`` and ``timeout``;
    the private attributes ``_engine`` (default ``None``) and ``_engine_lock`` (a
    ``threading.Lock`` per instance); and, where the frameworks spell a setting differently,
    the names it uses, in the class variables below.
    """

    __slots__ = ()

    #: The init argument ``from_model`` names the loaded model with (for traces).
    _model_name_argument: ClassVar[str]
    #: The field holding the most new tokens per call.
    _max_tokens_field: ClassVar[str]
    #: The field holding any other transformers ``generate()`` options.
    _generate_kwargs_field: ClassVar[str]

    @classmethod
    def from_model(cls: type[_Adapter], hf_model: Any, tokenizer: Any, /, **kwargs: Any) -> _Adapter:
        """Wrap an already loaded Hugging Face causal LM and its tokenizer.

        The recall tokens are added if the model does not have them yet. ``kwargs`` are the
        usual fields (``store``, ``user_id``, the most new tokens...); the model's name may
        still be given for traces (it defaults to the model's ``name_or_path``).
        """
        kwargs.setdefault(cls._model_name_argument, getattr(hf_model.config, "name_or_path", None) or None)
        generator = RecallGenerator(hf_model, tokenizer, config=kwargs.get("recall_config"))
        return cls(generator=generator, **kwargs)

    @property
    def engine(self) -> RecallGenerator:
        """The :class:`recall_core.RecallGenerator` behind this adapter (loaded on first use)."""
        if self._engine is None:
            with self._engine_lock:
                if self._engine is None:
                    self._engine = build_generator(
                        generator=self.generator, name_or_path=self.model_name, device=self.device,
                        dtype=self.dtype, config=self.recall_config,
                    )  # fmt: skip
        return self._engine

    def _check_recall_settings(self, owner: str, reserved: Iterable[str] = ()) -> None:
        """Check the settings at init: memory or store, generator, the other ``generate()``
        options (none of them may be one of the ``reserved`` names), the sampling ranges."""
        check_memory_arguments(self.memory, self.store)
        check_generator(self.generator)
        extra = getattr(self, self._generate_kwargs_field)
        check_call_kwargs(f"{owner} {self._generate_kwargs_field}", extra)
        clash = sorted(set(extra) & set(reserved))
        if clash:
            raise ValueError(
                f"set {', '.join(clash)} as field(s) of {owner}, not in {self._generate_kwargs_field}"
            )
        self._sampling_kwargs()  # checks the ranges now rather than at the first call

    def _sampling_kwargs(self) -> dict[str, Any]:
        kwargs = sampling_kwargs(
            temperature=self.temperature, max_tokens=getattr(self, self._max_tokens_field), top_p=self.top_p,
            top_k=self.top_k, repetition_penalty=self.repetition_penalty, timeout=self.timeout,
        )  # fmt: skip
        return {**getattr(self, self._generate_kwargs_field), **kwargs}

    def _prepare_call(
        self,
        owner: str,
        kwargs: Mapping[str, Any],
        adapter_arguments: Iterable[str],
        *,
        user_id: str | None,
        stop: Sequence[str] | None = None,
        policy: str | None = None,
    ) -> PreparedCall:
        """Merge the instance's settings with one call's kwargs; check the names first.

        ``user_id`` is whose memory the call searches in ``store`` (the adapter decides where
        it comes from); ``stop`` (the framework's own argument) wins over a ``stop=`` kwarg,
        which wins over the instance's; ``policy`` overrides the call's ``recall``.
        """
        check_call_kwargs(owner, kwargs, adapter_arguments)
        call = dict(kwargs)
        call.pop("user_id", None)
        session_id = call.pop("session_id", None)
        recall = call.pop("recall", None)
        recall_config = call.pop("recall_config", None)
        memory = call.pop("memory", None)
        stop_kw = call.pop("stop", None)
        gen_kwargs = {**self._sampling_kwargs(), **normalize_generation_kwargs(call)}

        stops = list(stop if stop is not None else (stop_kw if stop_kw is not None else (self.stop or [])))
        if stops:
            gen_kwargs["stop"] = stops
        config = self._recall_config(policy or recall, recall_config)
        gen_kwargs["config"] = config
        if memory is not None:
            check_memory_arguments(memory, None)
            gen_kwargs["memory"] = memory
        elif self.memory is not None or self.store is not None:
            gen_kwargs["memory"] = resolve_memory(self.memory, self.store, user_id)
        return PreparedCall(gen_kwargs, user_id, session_id, config)

    def _recall_config(
        self, recall: str | None = None, recall_config: RecallConfig | None = None
    ) -> RecallConfig:
        if recall_config is not None and not isinstance(recall_config, RecallConfig):
            raise TypeError(
                f"recall_config must be a recall_core.RecallConfig, got {type(recall_config).__name__}"
            )
        base = recall_config or self.recall_config or self.engine.config
        policy = recall or self.recall
        if policy is not None and policy != base.recall_policy:
            base = base.replace(recall_policy=policy)
        return base
