"""Training tests' shared settings: a small mixture, two small families, a few steps."""

from __future__ import annotations

from recall_core.training.examples import Mixture
from recall_core.training.lora import TrainConfig

SMALL = Mixture(repeats=1, general=4, auto_general=2)
#: Two small families and a hashing encoder: the data path runs for real, in seconds.
FAMILIES = ("templated", "people")


def small_config(**changes) -> TrainConfig:
    # max_length: the tiny tokenizer spells words in pieces, and an 'answered' note (a reply with the
    # turn it answers: the default unit) makes an auto-general example of ~500 ids, past the default 384.
    options = dict(steps=3, batch_size=4, mixture=SMALL, users=1, distill_tokens=6, agreement_prompts=2,
                   learning_rate=0.05, families=FAMILIES, encoder="hash", max_length=768)  # fmt: skip
    options.update(changes)
    return TrainConfig(**options)
