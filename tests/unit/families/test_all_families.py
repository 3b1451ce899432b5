"""What every conversation family must keep: independence of templates, determinism, valid questions."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys

import pytest

from recall_core.training.families import FAMILIES, base, generate
from tests.helpers.families import SEEDS, family_shapes


def test_no_family_shares_a_template_with_another():
    shapes = {name: family_shapes(name) for name in FAMILIES}
    shared = {
        (a, b): sorted(shapes[a] & shapes[b])[:5]
        for i, a in enumerate(FAMILIES) for b in list(FAMILIES)[i + 1 :] if shapes[a] & shapes[b]
    }  # fmt: skip
    assert shared == {}


@pytest.mark.parametrize("family", FAMILIES)
def test_every_question_is_sound(family):
    for seed in SEEDS:
        for user in generate(family, seed):
            turns = {(t.session, t.index): t for t in user.turns}
            assert user.questions, user.user_id
            for question in user.questions:
                assert question.user_id == user.user_id
                if question.kind == "unanswerable":
                    continue
                for at in question.evidence:
                    assert turns[at].role == "user" or turns[at].speaker  # named speakers: either one
                    assert base.score(question, turns[at].content)["correct"], (question, turns[at].content)
                for answer in question.answers:  # a question never gives its own answer away
                    assert not base.names(question.text, answer), question


@pytest.mark.parametrize("family", FAMILIES)
def test_deterministic_for_a_seed(family):
    assert generate(family, 3) == generate(family, 3)
    assert generate(family, 3) != generate(family, 4)


def test_user_ids_are_unique_across_families():
    ids = [u.user_id for name in FAMILIES for u in generate(name, 0)]
    assert len(ids) == len(set(ids))


def test_output_does_not_depend_on_string_hashing():
    code = (
        "import hashlib\nfrom recall_core.training.families import FAMILIES, generate\n"
        "print(hashlib.sha256(repr([generate(n, 5, users=2) for n in FAMILIES]).encode()).hexdigest())"
    )
    digests = {
        subprocess.run([sys.executable, "-c", code], env=dict(os.environ, PYTHONHASHSEED=seed), capture_output=True,
                       text=True, check=True).stdout.strip()
        for seed in ("1", "12345")
    }  # fmt: skip
    here = hashlib.sha256(repr([generate(n, 5, users=2) for n in FAMILIES]).encode()).hexdigest()
    assert digests == {here}


def test_an_unknown_family_is_refused():
    with pytest.raises(ValueError, match="family must be one of"):
        generate("nope", 0)
