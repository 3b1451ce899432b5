"""The real embedded models, loaded once per test session, and the recall-tuned one as a GGUF for
the serving engine (only tests filed here use them)."""

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


def engine_installed() -> bool:
    """Is a serving engine installed (``make engine``)?"""
    from recall_core.serving.engine import engine_command

    try:
        engine_command("x.gguf", 1)
    except FileNotFoundError:
        return False
    return True


@pytest.fixture(scope="session")
def tuned_gguf(tmp_path_factory: pytest.TempPathFactory):
    """The recall-tuned default written once as ``recall-tuned.f16.gguf`` (skips without an engine)."""
    from recall_core.models.loading import tuned_model_dir
    from recall_core.serving import export_gguf

    if not engine_installed():
        pytest.skip("no serving engine installed: run `make engine`")
    folder = tuned_model_dir()
    assert folder is not None
    return export_gguf(folder, tmp_path_factory.mktemp("gguf") / "recall-tuned.f16.gguf", "f16")
