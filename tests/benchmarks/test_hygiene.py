"""benchmarks.hygiene: each write policy writes what it says, and the report has both rounds."""

from __future__ import annotations

import pytest

from benchmarks.heldout import calls_of
from benchmarks.hygiene import POLICIES, ChatPolicy, markdown
from recall_core import RecallGenerator
from recall_core.memory.encoders import HashEncoder
from recall_core.training.families import FAMILIES
from tests.helpers.tiny import tiny_model


@pytest.fixture(scope="module")
def generator() -> RecallGenerator:
    model, tokenizer = tiny_model("llama", positions=2048)
    return RecallGenerator(model, tokenizer)


@pytest.mark.parametrize("name", ["user+assistant", "no-questions", "nothing"])
def test_a_policy_writes_the_chat_as_it_says(generator, name):
    users = FAMILIES["templated"].generate(1000, users=1)
    (user,) = users
    policy = ChatPolicy(name, POLICIES[name], generator, HashEncoder(32), max_new_tokens=2)
    try:
        policy.prepare(users)
        before = {r.text for r in policy.store.for_user(user.user_id).all()}
        calls = [c for c in calls_of("templated", users, 1000) if c.question.text.endswith("?")][:2]
        for i, call in enumerate(calls):
            policy.reply(call, thread=f"t{i}")
        added = [r for r in policy.store.for_user(user.user_id).all() if r.text not in before]
    finally:
        policy.close()
    asked = {c.question.text for c in calls}
    written_questions = {r.text for r in added if r.role == "user"} & asked
    if name == "user+assistant":
        assert written_questions == asked
    else:
        assert not written_questions
    if name == "nothing":
        assert added == []


def test_the_report_has_both_rounds_of_each_policy():
    per = {"questions": 2, "memory_questions": 1, "answered": 1, "unanswerable": 1, "abstained_unanswerable": 1,
           "unknown_with_answer": 0}  # fmt: skip
    result = {"families": ["templated"], "summary": {"nothing": {"1": {"templated": per, "all": per},
                                                                 "2": {"templated": per, "all": per}}},
              "added": {"nothing": 0}}  # fmt: skip
    table = markdown(result)
    assert "| nothing | 1 |" in table and "| nothing | 2 |" in table
