"""LoCoMo: recall against prompt stuffing, on a real long-term conversation benchmark.

Run ``python -m benchmarks.locomo --help``. The parts, in the order a run uses them:
:mod:`.cli` (arguments, writing the conversations into a store, the run, its files),
:mod:`.prompts` (the official protocol's wording, the stuffed history and excerpts),
:mod:`.bench` (model, store and settings every question shares; one timed generation),
:mod:`.answers` (the six methods and their rows), :mod:`.retrieval` (hit@k of the searches),
:mod:`.report` (the tables of BENCHMARKS.md and the plots).
"""

import os

# Before any part imports transformers or the hub client: the benchmark runs offline.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
