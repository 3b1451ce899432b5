"""Examples files (``recall train --save-examples`` / ``--examples-file``): built where the encoder and
store are, trained on elsewhere. A file records the token ids its examples were made with and the
families they come from, and is refused for a tokenizer whose ids differ (since 2026-12-07: before,
a file built for another tokenizer trained on ids that meant other tokens, without a word).
"""

from __future__ import annotations

import gzip
import json
import os
import warnings
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from recall_core.tokens import MEMORY_PAD_TOKEN, RECALL_TOKEN
from recall_core.training.examples import Example
from recall_core.training.families import FAMILIES

#: The key of a file's first line, the header (files written before 2026-12-07 have none).
HEADER = "recall_examples"
#: The tokenizer's facts a header records, all of which must match where the file is trained on.
FACTS = ("recall_token_id", "memory_pad_token_id", "pad_token_id", "vocab_size")


def tokenizer_facts(tokenizer: Any) -> dict[str, Any]:
    """The ids an example's tokens depend on: the recall tokens', the pad's, the vocabulary's size."""
    return {"recall_token_id": tokenizer.convert_tokens_to_ids(RECALL_TOKEN),
            "memory_pad_token_id": tokenizer.convert_tokens_to_ids(MEMORY_PAD_TOKEN),
            "pad_token_id": tokenizer.pad_token_id, "vocab_size": len(tokenizer)}  # fmt: skip


def save_examples(path: str | Path, examples: Sequence[Example], tokenizer: Any = None,
                  families: Sequence[str] | None = None, data: dict[str, Any] | None = None) -> Path:
    """Write examples as gzipped JSON lines (to train elsewhere, e.g. on a GPU machine).

    The first line, a header, records ``tokenizer``'s facts (:func:`tokenizer_facts`, its name
    too), the conversation ``families`` the examples were built from, and ``data``, what made them
    (the mixture, users, encoder and seed: the recipe of an adapter trained on the file records
    them), where given.
    """
    path = Path(path).expanduser()
    header: dict[str, Any] = {HEADER: 1}
    if tokenizer is not None:
        header |= {"tokenizer": str(getattr(tokenizer, "name_or_path", "")), **tokenizer_facts(tokenizer)}
    if families is not None:
        header["families"] = list(families)
    if data is not None:
        header["data"] = data
    # written beside and moved into place: a run killed while writing left a cut file at ``path`` (a reviewer, 2026-12-07)
    partial = path.with_name(f".{path.name}.partial")
    try:
        with gzip.open(partial, "wt", encoding="utf-8") as out:
            if len(header) > 1:
                out.write(json.dumps(header) + "\n")
            for e in examples:
                out.write(json.dumps({"kind": e.kind, "input_ids": e.input_ids, "labels": e.labels, "meta": e.meta}) + "\n")
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
    return path


def read_examples(path: str | Path) -> tuple[dict[str, Any] | None, list[Example]]:
    """A file's header (``None`` for a file written before 2026-12-07) and all its examples, each row
    checked for its fields' types (:func:`_example`)."""
    try:
        with gzip.open(Path(path).expanduser(), "rt", encoding="utf-8") as lines:
            rows = [(number, json.loads(line)) for number, line in enumerate(lines, start=1) if line.strip()]
    except (EOFError, gzip.BadGzipFile, zlib.error, UnicodeDecodeError, json.JSONDecodeError) as error:
        # a cut or damaged file: named, not a traceback (an uncaught EOFError until 2026-12-07, a reviewer)
        raise ValueError(f"--examples-file {path} is damaged or cut short ({type(error).__name__}: {error}): "
                         "write it again with --save-examples") from None
    header = rows.pop(0)[1] if rows and isinstance(rows[0][1], dict) and HEADER in rows[0][1] else None
    return header, [_example(path, number, row) for number, row in rows]


def _example(path: str | Path, number: int, row: Any) -> Example:
    """Line ``number``'s example; ``ValueError`` naming the file, the line and the field where a field is
    missing or of another type (until 2026-12-07 a float id was trained on cut, and a label past the
    vocabulary failed the run at its last step: a reviewer)."""

    def bad(what: str) -> ValueError:
        return ValueError(f"--examples-file {path}, line {number}: {what}: write it again with --save-examples")

    if not isinstance(row, dict):
        raise bad(f"an example must be an object, got {type(row).__name__}")
    missing = [k for k in ("kind", "input_ids", "labels", "meta") if k not in row]
    if missing:
        raise bad(f"no {', '.join(missing)}")
    kind, ids, labels, meta = row["kind"], row["input_ids"], row["labels"], row["meta"]
    if not isinstance(kind, str) or not isinstance(meta, dict):
        raise bad("kind must be text and meta an object")
    for name, values in (("input_ids", ids), ("labels", labels)):
        if not isinstance(values, list) or not values or not all(type(v) is int for v in values):
            raise bad(f"{name} must be a non-empty list of ints")
    if len(ids) != len(labels):
        raise bad(f"input_ids and labels must have the same length, got {len(ids)} and {len(labels)}")
    return Example(kind, ids, labels, meta)


def check_examples(path: str | Path, header: dict[str, Any] | None, examples: Sequence[Example], tokenizer: Any) -> None:
    """Refuse examples made for another tokenizer than ``tokenizer`` (``path`` names the file), and ids
    or labels outside its vocabulary.

    A file with a header must record the same :func:`tokenizer_facts`; one without (written before
    2026-12-07) can only be checked for ids past the vocabulary, and a warning says so.

    Raises:
        ValueError: naming the file and the ids that differ.
    """
    facts = tokenizer_facts(tokenizer)
    checked = header is not None and all(k in header for k in FACTS)
    if checked:
        wrong = [f"{k} {header[k]} in the file, {facts[k]} for this model" for k in FACTS if header[k] != facts[k]]  # type: ignore[index]
        if wrong:
            made = f" (made with {header['tokenizer']})" if header.get("tokenizer") else ""  # type: ignore[union-attr]
            raise ValueError(f"examples file {path} was built for another tokenizer{made}: {'; '.join(wrong)}; "
                             "build the examples again with this model (--save-examples)")  # fmt: skip
    size, first = facts["vocab_size"], 2 if header is not None else 1
    for index, example in enumerate(examples):
        if not all(0 <= i < size for i in example.input_ids) or not all(
            label == -100 or 0 <= label < size for label in example.labels
        ):
            where = f"{path}, line {first + index}:" if checked else f"{path} was built for another tokenizer: line {first + index} holds"
            raise ValueError(f"examples file {where} an id or label outside this model's vocabulary of {size} (labels "
                             "may also be -100); build the examples again with this model")  # fmt: skip
    if not checked:
        warnings.warn(f"examples file {path} records no tokenizer (written before 2026-12-07): only ids past the "
                      "vocabulary could be checked", stacklevel=2)  # fmt: skip


def file_families(header: dict[str, Any] | None, examples: Sequence[Example]) -> tuple[str, ...]:
    """The conversation families a file's examples come from: what its header records, else those
    its examples name (``meta["family"]``), in :data:`FAMILIES`' order."""
    if header is not None and "families" in header:
        return tuple(header["families"])
    named = {e.meta.get("family") for e in examples}
    return tuple(f for f in FAMILIES if f in named)


def load_examples(path: str | Path, exclude: Sequence[str] = (), tokenizer: Any = None) -> list[Example]:
    """Examples written by :func:`save_examples`, without those of the families in ``exclude``;
    checked against ``tokenizer`` where given (:func:`check_examples`)."""
    header, examples = read_examples(path)
    if tokenizer is not None:
        check_examples(path, header, examples, tokenizer)
    return [e for e in examples if e.meta.get("family") not in set(exclude)]
