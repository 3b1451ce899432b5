"""Recall where models are served: the recall loop over a serving engine (llama.cpp's server).

* :class:`ServedRecallGenerator`: a ``RecallGenerator`` that decodes on an engine, in token ids;
* :class:`EngineServer`: start / stop an engine on 127.0.0.1 (tests, benchmarks, trying it out);
* :class:`EngineClient`, :class:`EngineError`: the engine's completion API, and its failures;
* :func:`export_gguf`: a Hugging Face llama folder (the recall-tuned default) as a GGUF file.

The in-process transformers loop stays the reference and the default; docs/serving.md says
what runs where and how to deploy many clients, engine replicas and one Chroma server.
"""

from recall_core.serving.client import Completion, EngineClient, EngineError
from recall_core.serving.engine import EngineServer
from recall_core.serving.generator import ServedRecallGenerator
from recall_core.serving.gguf_export import export_default_models, export_gguf
from recall_core.serving.loop import ServedOutput

__all__ = [
    "Completion",
    "EngineClient",
    "EngineError",
    "EngineServer",
    "ServedOutput",
    "ServedRecallGenerator",
    "export_default_models",
    "export_gguf",
]
