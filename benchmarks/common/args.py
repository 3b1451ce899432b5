"""Command-line parts the benchmarks share: where results go, seeds of the conversations
generator, and ``--variant`` specs of ``RecallConfig`` changes."""

from __future__ import annotations

import argparse
import ast
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

#: Every benchmark writes under ``benchmarks/out/`` unless given ``--out``.
OUT = Path(__file__).resolve().parents[1] / "out"


def seed_of(text: str) -> int:
    """A seed of ``recall_core.training.conversations``: a name in its ``SEEDS`` or an integer."""
    from recall_core.training.conversations import SEEDS

    return SEEDS[text] if text in SEEDS else int(text)


def names_in(text: str, allowed: Iterable[str], option: str, what: str) -> list[str]:
    """The body of an argparse type for ``option``: comma-separated names of ``allowed``; none, or
    one that is not there, is refused by name (``"{option} must name {what} of ..."``)."""
    allowed = list(allowed)
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names or set(names) - set(allowed):
        raise argparse.ArgumentTypeError(f"{option} must name {what} of {', '.join(allowed)}, got {text!r}")
    return names


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
