"""Command-line parts the benchmarks share: where results go, seeds of the conversations
generator, and ``--variant`` specs of ``RecallConfig`` changes."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

#: Every benchmark writes under ``benchmarks/out/`` unless given ``--out``.
OUT = Path(__file__).resolve().parents[1] / "out"


def seed_of(text: str) -> int:
    """A seed of ``recall_core.training.conversations``: a name in its ``SEEDS`` or an integer."""
    from recall_core.training.conversations import SEEDS

    return SEEDS[text] if text in SEEDS else int(text)


#: A comma that starts the next ``field=`` of a variant (not one inside a value).
_ITEM_SEPARATOR = re.compile(r",(?=\s*[A-Za-z_]\w*\s*=)")


def parse_variant(text: str) -> tuple[str, dict[str, Any]]:
    """``"NAME:field=value,field=value"`` -> ``("recall:NAME", {field: value})`` (values as Python literals).

    Only a comma before the next ``field=`` separates items, so a value may hold commas:
    ``roles=('user',)``, ``template='a, b'``.
    """
    name, _, spec = text.partition(":")
    changes: dict[str, Any] = {}
    for item in filter(None, (s.strip() for s in _ITEM_SEPARATOR.split(spec))):
        key, _, raw = item.partition("=")
        try:
            changes[key.strip()] = ast.literal_eval(raw.strip())
        except (ValueError, SyntaxError):
            changes[key.strip()] = raw.strip()
    return f"recall:{name}", changes
