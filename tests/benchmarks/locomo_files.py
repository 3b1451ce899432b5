"""LoCoMo-shaped files for the benchmark tests: a synthetic conversation, or a slice of the dev file."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.common.locomo_data import DEFAULT_DATA


def write_locomo(path: Path, samples: list[dict] | None = None) -> Path:
    """``samples`` (default: :func:`synthetic_locomo`) written to ``path`` as a LoCoMo file; returns ``path``."""
    path.write_text(json.dumps(synthetic_locomo() if samples is None else samples))
    return path


def synthetic_locomo() -> list[dict]:
    """Two sessions between Ada and Ben, questions of every category with evidence ids."""
    s1 = [
        ("Ada", "I adopted a beagle puppy and named him Zorblax."),
        ("Ben", "What a name! I started learning the bassoon last week."),
        ("Ada", "I work as a lighthouse keeper on Berlenga island."),
        ("Ben", "My sister Ana moved to Trondheim for a new job."),
    ]
    s2 = [
        ("Ada", "Zorblax chewed my favourite red scarf yesterday."),
        ("Ben", "I played the bassoon at the town concert on Saturday."),
        ("Ada", "We went hiking in the Alps with Zorblax."),
        ("Ben", "Ana says Trondheim is cold but beautiful."),
    ]
    conversation = {"speaker_a": "Ada", "speaker_b": "Ben", "session_1_date_time": "1:56 pm on 8 May, 2023",
                    "session_2_date_time": "10:00 am on 20 May, 2023"}
    for number, turns in ((1, s1), (2, s2)):
        conversation[f"session_{number}"] = [
            {"speaker": s, "dia_id": f"D{number}:{i + 1}", "text": t} for i, (s, t) in enumerate(turns)
        ]
    qa = [
        {"question": "What is the name of Ada's dog?", "answer": "Zorblax", "evidence": ["D1:1"], "category": 4},
        {"question": "Which instrument does Ben play?", "answer": "bassoon", "evidence": ["D1:2"], "category": 4},
        {"question": "When did Zorblax chew the scarf?", "answer": "19 May 2023", "evidence": ["D2:1"], "category": 2},
        {"question": "Where does Ben's sister live and what is it like?", "answer": "Trondheim, cold",
         "evidence": ["D1:4", "D2:4"], "category": 1},
        {"question": "Would Ada enjoy a job at sea?", "answer": "yes; she keeps a lighthouse", "evidence": ["D1:3"],
         "category": 3},
        {"question": "What did Ada name her cat?", "adversarial_answer": "Zorblax", "evidence": ["D1:1"],
         "category": 5},
    ]
    return [{"sample_id": "synthetic-1", "conversation": conversation, "qa": qa}]


def dev_slice() -> list[dict] | None:
    """The first two sessions of the dev file's first conversation and up to 10 questions about them."""
    if not DEFAULT_DATA.is_file():
        return None
    sample = json.loads(DEFAULT_DATA.read_text(encoding="utf-8"))[0]
    conv = sample["conversation"]
    keep = {k: v for k, v in conv.items() if k in ("speaker_a", "speaker_b") or k.split("_")[1] in ("1", "2")}
    ids = {t["dia_id"] for k in ("session_1", "session_2") for t in conv[k]}
    qa = [q for q in sample["qa"] if q["evidence"] and set(q["evidence"]) <= ids][:10]
    return [{"sample_id": sample["sample_id"], "conversation": keep, "qa": qa}]
