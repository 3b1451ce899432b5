"""Loading a model: what fails without a network, and how it says so."""

from __future__ import annotations

import pytest

from recall_core.models.loading import ModelLoadError, load_model


def test_unknown_model_offline_fails_fast_with_advice(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelLoadError, match="not a local folder.*hf download"):
        load_model("someone/not-a-cached-model")
