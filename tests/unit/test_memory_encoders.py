"""Encoders: the deterministic hash encoder, and how an encoder is named.

The packaged all-MiniLM-L6-v2 itself: tests/integration/test_encoders.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from recall_core.memory import HashEncoder
from recall_core.memory.encoders import DEFAULT_ENCODER_NAME, load_encoder
from tests.helpers.processes import run_child


def test_hash_encoder_is_deterministic_across_processes(tmp_path) -> None:
    encoder = HashEncoder(16)
    here = encoder.encode(["The quick brown fox"])[0]
    there = run_child(tmp_path, "print(HashEncoder(16).encode(['The quick brown fox'])[0].tolist())", timeout=60)
    assert there.returncode == 0, there.stderr
    assert np.allclose(here, eval(there.stdout))  # noqa: S307 - our own child's list literal
    assert np.linalg.norm(here) == pytest.approx(1.0)
    vectors = encoder.encode(["fox fox", "quick fox", "zebra"])
    assert vectors.shape == (3, 16) and vectors.dtype == np.float32
    assert encoder.encode([]).shape == (0, 16)


def test_load_encoder_specs() -> None:
    assert isinstance(load_encoder("hash-12"), HashEncoder) and load_encoder("hash-12").dimension == 12
    assert load_encoder(None).name == DEFAULT_ENCODER_NAME  # lazy: nothing loaded yet
    encoder = HashEncoder(4)
    assert load_encoder(encoder) is encoder
    with pytest.raises(TypeError):
        load_encoder(3.5)  # type: ignore[arg-type]


