"""The real embedded models, loaded once per test session (only tests filed here use them)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def smollm():
    """The embedded default model (SmolLM2-135M-Instruct, recall-tuned), loaded once per test session."""
    from recall_core import load_model

    return load_model()


@pytest.fixture(scope="session")
def smollm_plain():
    """The embedded default model as released, without the recall adapter (``tuned=False``)."""
    from recall_core import load_model

    return load_model(tuned=False)
