"""The time bound of constrained replies on the default model, bounded and unbounded in one run.

The issue's case: a memory "My dog is called Pluto and my PIN is 432.", a question, and a
``Pet(name, species)`` JSON schema. Each round decodes it once per bound (rounds alternate the
bounds, so load on the machine hits them alike): ``inf`` (no bound), the default
(``CONSTRAINED_MAX_TIME``) and the ``--tight`` one. Printed per call: wall seconds,
``finish_reason`` ("time" when the bound closed the reply), tokens written and injected, and
the value; then the median seconds per bound and the machine's load averages. Timings on a
shared machine are noisy: compare the bounds within the run.

    python -m benchmarks.structured_time                  # 3 rounds, 256 tokens
    python -m benchmarks.structured_time --rounds 1 --max-tokens 64
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
import warnings
from typing import Any

from benchmarks.common.progress import progress
from benchmarks.common.results import load_average
from recall_core import RecallGenerator
from recall_core.memory import MemoryStore
from recall_core.structured.constrained import CONSTRAINED_MAX_TIME

FACT = "My dog is called Pluto and my PIN is 432."
ASK = [{"role": "user", "content": "What is my pet's name and species?"}]
PET = {"type": "json_schema", "json_schema": {"name": "Pet", "schema": {
    "type": "object", "properties": {"name": {"type": "string"}, "species": {"type": "string"}},
    "required": ["name", "species"]}}}  # fmt: skip


def one_call(generator: RecallGenerator, bound: float, max_tokens: int) -> dict[str, Any]:
    """One constrained reply under ``bound`` seconds: what it took and what it wrote."""
    start = time.monotonic()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the "time" finish is reported below
        result = generator.generate(ASK, response_format=PET, max_new_tokens=max_tokens, max_time=bound)
    return {
        "bound_s": bound, "seconds": round(time.monotonic() - start, 2), "finish_reason": result.finish_reason,
        "generated": result.usage.generated_tokens, "injected": result.usage.injected_tokens,
        "value": _parsed(result.text),
    }  # fmt: skip


def _parsed(text: str) -> Any:
    """The reply's JSON, or what was written when it does not parse (a reply cut mid-JSON)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return {"invalid_json": text}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--max-tokens", type=int, default=256)
    parser.add_argument("--tight", type=float, default=5.0, help="a bound below the reply's time (seconds)")
    args = parser.parse_args(argv)
    bounds = [float("inf"), CONSTRAINED_MAX_TIME, args.tight]
    load_before = load_average()
    with tempfile.TemporaryDirectory() as folder, MemoryStore.local(folder) as store:
        store.for_user("ada").add(FACT)
        generator = RecallGenerator.from_pretrained(memory=store.for_user("ada"))
        generator.generate(ASK, response_format=PET, max_new_tokens=4)  # load, compile, warm up
        calls = []
        for _ in progress(range(args.rounds), desc="rounds", show=True):
            for bound in bounds:
                calls.append(one_call(generator, bound, args.max_tokens))
                print(json.dumps(calls[-1], ensure_ascii=False), flush=True)
    medians = {str(b): statistics.median(c["seconds"] for c in calls if c["bound_s"] == b) for b in bounds}
    summary = {"max_tokens": args.max_tokens, "median_seconds": medians, "load_before": load_before,
               "load_after": load_average()}  # fmt: skip
    print(json.dumps(summary))
    return summary


if __name__ == "__main__":
    main()
