"""``benchmarks.base_replies`` on tiny models: both sessions answer every turn, the base model's
replies are the ones the figures time, and the table and the plot are written."""

from __future__ import annotations

from benchmarks import base_replies
from recall_core import RecallGenerator
from tests.helpers.tiny import tiny_model

LINES = ["I went hiking on Saturday.", "The weather was lovely.", "We saw a deer near the lake."]


def test_both_sessions_answer_each_turn_and_the_figures_are_written(tmp_path):
    tuned, tokenizer = tiny_model("llama", seed=0)
    base, _ = tiny_model("llama", seed=1)
    generator = RecallGenerator(tuned, tokenizer, base_model=base)
    result = base_replies.run(generator, LINES, tokens=4, show=False)
    assert [r["turn"] for r in result["turns"]] == [1, 2, 3]
    first, last = result["turns"][0], result["turns"][-1]
    plain = RecallGenerator(base, tokenizer).generate(
        [{"role": "system", "content": base_replies.SYSTEM}, {"role": "user", "content": LINES[0]}],
        memory=None, max_new_tokens=4, do_sample=False)  # fmt: skip
    assert first["base_replies"]["reply"] == plain.text != first["tuned"]["reply"]
    assert last["base_replies"]["prefilled"] < last["base_replies"]["prompt_tokens"]  # its own session's cache
    assert set(result["median_after_turn_1"]) == set(base_replies.MODES)
    table = base_replies.markdown(result)
    assert "base_replies" in table and "resident memory" in table
    base_replies.plot(result, tmp_path / "base_replies.png")
    assert (tmp_path / "base_replies.png").stat().st_size > 0


def test_the_base_loaded_again_is_a_third_session_with_the_same_replies(tmp_path):
    """``--loaded-base``: a third session whose base model is a model of its own answers as the
    second does (the same base), and the table and the plot show it."""
    tuned, tokenizer = tiny_model("llama", seed=0)
    base, _ = tiny_model("llama", seed=1)
    generator = RecallGenerator(tuned, tokenizer, base_model=base)
    result = base_replies.run(generator, LINES, tokens=4, show=False, load_base=lambda: tiny_model("llama", seed=1)[0])
    for row in result["turns"]:
        assert row[base_replies.LOADED]["reply"] == row["base_replies"]["reply"]
    assert set(result["rss"]) == {"before", "after_tuned", "after_base_replies", f"after_{base_replies.LOADED}"}
    table = base_replies.markdown(result)
    assert "the base loaded again" in table and table.splitlines()[0].count("|") == 7
    base_replies.plot(result, tmp_path / "base_replies.png")


def test_the_served_run_times_three_generators_on_scripted_engines(tmp_path):
    """``--served`` on scripted engines: each mode's requests go where they should (the adapter's
    field on the tuned engine, or the plain engine), and the table and the plot are written."""
    from recall_core.serving.client import Completion
    from tests.helpers.engines import ScriptedEngine

    _, tokenizer = tiny_model("llama")
    said = Completion(tokens=[7, tokenizer.eos_token_id], stop_type="eos", logprobs=[{7: -0.1}] * 2)
    tuned = ScriptedEngine(*[said] * 6, adapters=[{"id": 0, "path": "a.gguf", "scale": 0.0}])
    plain = ScriptedEngine(*[said] * 3)
    result = base_replies.run_served({"tuned": tuned, "plain": plain}, None, LINES, tokens=4, show=False,
                                     tokenizer=tokenizer, context_window=512)  # fmt: skip
    assert [r["turn"] for r in result["turns"]] == [1, 2, 3]
    assert len(plain.bodies) == 3 and sum(body.get("lora") == [{"id": 0, "scale": -1.0}] for body in tuned.bodies) == 3
    assert "a plain engine" in base_replies.served_markdown(result)
    base_replies.plot(result, tmp_path / "served.png")
    assert (tmp_path / "served.png").stat().st_size > 0
