"""Framework-neutral glue shared by the LangChain and LlamaIndex adapters.

Nothing here imports LangChain or LlamaIndex (pydantic only: both frameworks' classes are
pydantic v2 models), and nothing here is engine logic. :class:`RecallAdapterBase` declares
the settings both adapters share, once, and does what an adapter does with them (the
lazily built engine, ``from_model``, the checks at init, one call's ``generate``
arguments); the helpers below load models once per process, pick the memory for a call
and turn results into plain dicts. Generation options are read by
:mod:`recall_core.settings`, exactly as the engine reads them.

Modules: :mod:`.arguments` (the names the adapters take, the memory a call searches, the checks at
init, the ``recall`` shortcut), :mod:`.calls` (one call: prepared, cancelled, its results as
dicts), :mod:`.models` (models loaded once per process), :mod:`.base` (``RecallAdapterBase``).
Everything is imported from here.
"""

from __future__ import annotations

from recall_core.integration.arguments import (
    CALL_ARGUMENTS,
    FIELD_OPTIONS,
    OUTPUT_ARGUMENTS,
    PROVIDER,
    WRITE_MEMORY,
    WRITE_QUESTIONS,
    check_generator,
    check_memory_arguments,
    check_thread_id,
    check_writing,
    mark_for_recall,
    resolve_memory,
    with_recall_policy,
)
from recall_core.integration.base import RecallAdapterBase
from recall_core.integration.calls import (
    CANCEL_WAIT_S,
    PreparedCall,
    cancellable_kwargs,
    recall_dicts,
    remember_later,
    run_cancellable,
    stop_stream,
    unanswered,
    usage_dict,
)
from recall_core.integration.models import build_generator, model_display_name, shared_model

__all__ = ['CALL_ARGUMENTS', 'CANCEL_WAIT_S', 'FIELD_OPTIONS', 'OUTPUT_ARGUMENTS', 'PROVIDER', 'PreparedCall', 'RecallAdapterBase', 'WRITE_MEMORY', 'WRITE_QUESTIONS', 'build_generator', 'cancellable_kwargs', 'check_generator', 'check_memory_arguments', 'check_thread_id', 'check_writing', 'mark_for_recall', 'model_display_name', 'recall_dicts', 'remember_later', 'resolve_memory', 'run_cancellable', 'shared_model', 'stop_stream', 'unanswered', 'usage_dict', 'with_recall_policy']
