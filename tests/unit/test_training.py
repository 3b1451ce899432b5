"""Recall tuning: LoRA training end to end on a tiny random model, adapters that refuse a model
they were not trained for, the base model beside the tuned one, and `recall train`."""

from __future__ import annotations

import json

import pytest
import torch
from safetensors.torch import load_file

from recall_core import RecallConfig, RecallGenerator
from recall_core.models.base import BASE_LOADER, base_model_of, without_adapter
from recall_core.models.loading import load_model
from recall_core.models.lora import (
    ADAPTER_FOLDER,
    META_FILE,
    WEIGHTS_FILE,
    apply_adapter,
    base_fingerprint,
    check_adapter,
    read_meta,
)
from recall_core.tokens import RECALL_TOKEN
from recall_core.training import family_data
from recall_core.training.examples import (
    IGNORE,
    ExampleBuilder,
    Mixture,
)
from recall_core.training.lora import TrainConfig, agreement, train_recall
from tests.helpers.tiny import tiny_model
from tests.helpers.training import SMALL, small_config


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    model, tokenizer = tiny_model()
    out = tmp_path_factory.mktemp("adapter")
    before = {k: v.clone() for k, v in model.state_dict().items()}
    result = train_recall(model, tokenizer, out, small_config(), base_model="tiny", progress=False)
    return model, tokenizer, result, before


def test_training_end_to_end_saves_a_small_adapter_and_leaves_the_model_alone(trained):
    model, tokenizer, result, before = trained
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())
    assert len(result.losses) == 3 and all(loss == loss for loss in result.losses)
    assert result.counts["general"] == SMALL.general and result.counts["auto-general"] == SMALL.auto_general
    assert result.counts.get("recall", 0) + result.counts.get("auto", 0) > 0  # one per question (repeats=1)
    weights = load_file(str(result.adapter / WEIGHTS_FILE))
    assert weights and all(t.dtype == torch.float16 for t in weights.values())
    meta = read_meta(result.adapter)
    assert meta["base_fingerprint"] == base_fingerprint(model) and meta["recipe"]["seed"] == 0
    assert set(result.checks) >= {"recall_first_on_memory_questions", "recall_first_on_general_prompts", "agreement",
                                  "dont_know_with_nothing_found"}
    log = json.loads((result.adapter / "training_log.json").read_text())
    assert len(log["losses"]) == 3


def test_training_is_deterministic_for_a_seed(trained, tmp_path):
    _, _, result, _ = trained
    model, tokenizer = tiny_model()
    again = train_recall(model, tokenizer, tmp_path, small_config(), progress=False)
    assert again.losses == pytest.approx(result.losses, rel=1e-5)


def test_the_merged_adapter_changes_the_model_and_matches_peft(trained):
    from peft import PeftModel

    model, tokenizer, result, _ = trained
    ids = torch.tensor([[1, 5, tokenizer.convert_tokens_to_ids(RECALL_TOKEN), 7, 9]])
    with torch.no_grad():
        plain = model(input_ids=ids).logits
        peft_model = PeftModel.from_pretrained(tiny_model()[0], str(result.adapter)).eval()
        with_peft = peft_model(input_ids=ids).logits
        merged = apply_adapter(tiny_model()[0], tokenizer, result.adapter)(input_ids=ids).logits
    assert (with_peft - merged).abs().max() < 1e-4
    assert (plain - merged).abs().max() > 1e-4


def test_load_model_merges_an_adapter_for_that_folder(trained, tmp_path):
    model, tokenizer, result, _ = trained
    model.save_pretrained(tmp_path / "tiny")
    tokenizer.save_pretrained(tmp_path / "tiny")
    loaded, loaded_tokenizer = load_model(tmp_path / "tiny", device="cpu", adapter=result.adapter)
    reference = apply_adapter(tiny_model()[0], tokenizer, result.adapter)
    ids = torch.tensor([[1, 2, 3]])
    with torch.no_grad():
        assert torch.allclose(loaded(input_ids=ids).logits, reference(input_ids=ids).logits, atol=1e-5)
        # the model it was merged into, for RecallConfig.base_replies: loaded when first asked for
        names = [name for name, _ in loaded.named_parameters()]
        base = base_model_of(loaded)
        assert base is not loaded and base_model_of(loaded) is base
        assert [name for name, _ in loaded.named_parameters()] == names  # kept apart: not a submodule
        assert torch.allclose(base(input_ids=ids).logits, model(input_ids=ids).logits, atol=1e-5)
    assert base_model_of(load_model(tmp_path / "tiny", device="cpu")[0]) is None  # no adapter: nothing recorded


def test_the_base_is_the_tuned_model_less_its_adapter_sharing_its_weights(trained, tmp_path):
    """``without_adapter``: the model an adapter was merged into, made from the merged one, for
    ``base_replies``: the same logits (the recall tokens' included) and the same greedy reply as the
    model loaded again, at the cost of the adapter's factors alone; the tuned model is untouched."""
    model, tokenizer, result, _ = trained
    model.save_pretrained(tmp_path / "tiny")
    tokenizer.save_pretrained(tmp_path / "tiny")
    tuned, _ = load_model(tmp_path / "tiny", device="cpu", adapter=result.adapter)
    plain, _ = load_model(tmp_path / "tiny", device="cpu")
    ids = torch.tensor([[1, 5, tokenizer.convert_tokens_to_ids(RECALL_TOKEN), 7, 9]])
    with torch.no_grad():
        before = tuned(input_ids=ids).logits
        base = without_adapter(tuned, result.adapter)
        assert (base(input_ids=ids).logits - plain(input_ids=ids).logits).abs().max() < 1e-5
        assert torch.equal(tuned(input_ids=ids).logits, before)  # the tuned model is as it was
        assert (before - plain(input_ids=ids).logits).abs().max() > 1e-3
    weights = {p.data_ptr() for p in tuned.parameters()}
    assert all(p.data_ptr() in weights for name, p in base.named_parameters() if "lora_" not in name)
    assert not hasattr(base, BASE_LOADER) and not hasattr(base, ADAPTER_FOLDER)
    prompt = torch.tensor([[1, 5, 7, 9, 11]])
    assert torch.equal(base.generate(prompt, max_new_tokens=12, do_sample=False),
                       plain.generate(prompt, max_new_tokens=12, do_sample=False))  # fmt: skip

@pytest.mark.parametrize("kind", ["gemma3", "qwen2-padded"])
def test_the_base_is_exact_for_scaled_and_padded_embeddings(kind, tmp_path):
    """The recall tokens' untrained rows, restored by ``without_adapter``, are those training started
    from on other embeddings too: one that scales what it reads (Gemma's ScaledWordEmbedding, tied to
    the head) and a padded vocabulary whose spare rows the tokens take (Qwen2's releases). Until
    2026-12-05 the first missed the scale and the second restored values it never had (logits off by
    0.07 and 0.63 wherever ``<recall>`` was read)."""
    model, tokenizer = tiny_model(kind)
    if kind == "qwen2-padded":  # the tokens took spare rows, started as new rows are
        assert model.get_input_embeddings().num_embeddings > len(tokenizer)
    model.save_pretrained(tmp_path / "base")
    tokenizer.save_pretrained(tmp_path / "base")
    result = train_recall(model, tokenizer, tmp_path / "adapter", small_config(), base_model="tiny", progress=False)
    tuned, _ = load_model(tmp_path / "base", device="cpu", adapter=result.adapter)
    plain, _ = load_model(tmp_path / "base", device="cpu")
    ids = torch.tensor([[1, 5, tokenizer.convert_tokens_to_ids(RECALL_TOKEN), 7, 9]])
    with torch.no_grad():
        base = without_adapter(tuned, result.adapter)
        assert (base(input_ids=ids).logits - plain(input_ids=ids).logits).abs().max() < 1e-5
        assert (tuned(input_ids=ids).logits - plain(input_ids=ids).logits).abs().max() > 1e-3


@pytest.mark.parametrize("kind", ["llama", "qwen2-padded"])
def test_a_model_that_had_the_recall_tokens_keeps_its_rows_given_a_tokenizer_without_them(kind):
    """A recall-tuned model saved merged and paired with its base tokenizer: the tokens are added to
    the tokenizer again, and the model's trained rows stay (its config names the tokens). Only rows
    no model had are started (new ones, or a padded vocabulary's spare ones)."""
    from recall_core.tokens import add_recall_tokens
    from tests.helpers.tiny import tiny_tokenizer

    model, tokenizer = tiny_model(kind)
    ids = [model.config.recall_token_id, model.config.memory_pad_token_id]
    with torch.no_grad():
        model.get_input_embeddings().weight[ids] = 5.0  # as training left them
    assert add_recall_tokens(model, tiny_tokenizer()) == tuple(ids)
    assert bool((model.get_input_embeddings().weight[ids] == 5.0).all())


def test_the_base_of_a_bfloat16_model_is_the_plain_one_to_its_rounding(trained, tmp_path):
    """In bfloat16 (the default dtype on CUDA) the merged weights are rounded once: the base made
    from them is the plain model to that rounding, not further from it than the tuned model is near."""
    model, tokenizer, result, _ = trained
    model.save_pretrained(tmp_path / "tiny")
    tokenizer.save_pretrained(tmp_path / "tiny")
    tuned, _ = load_model(tmp_path / "tiny", device="cpu", dtype=torch.bfloat16, adapter=result.adapter)
    plain, _ = load_model(tmp_path / "tiny", device="cpu", dtype=torch.bfloat16)
    ids = torch.tensor([[1, 5, tokenizer.convert_tokens_to_ids(RECALL_TOKEN), 7, 9]])
    with torch.no_grad():
        base = without_adapter(tuned, result.adapter)
        assert next(base.parameters()).dtype == torch.bfloat16
        off = (base(input_ids=ids).logits.float() - plain(input_ids=ids).logits.float()).abs().max()
        tuned_off = (tuned(input_ids=ids).logits.float() - plain(input_ids=ids).logits.float()).abs().max()
        assert off < 0.05 and off < tuned_off / 5, (off, tuned_off)


def test_the_base_and_the_tuned_model_run_at_once_from_two_threads(trained, tmp_path):
    """The base model shares the tuned one's weights: run together from two threads, each gives
    what it gives alone (peft's layers at scale -1 change no shared tensor)."""
    import threading

    model, tokenizer, result, _ = trained
    model.save_pretrained(tmp_path / "tiny")
    tokenizer.save_pretrained(tmp_path / "tiny")
    tuned, _ = load_model(tmp_path / "tiny", device="cpu", adapter=result.adapter)
    base = base_model_of(tuned)
    prompt = torch.tensor([[1, 5, 7, 9, 11]])
    alone = {name: m.generate(prompt, max_new_tokens=16, do_sample=False) for name, m in (("tuned", tuned), ("base", base))}
    together: dict[str, list[torch.Tensor]] = {"tuned": [], "base": []}

    def run(name: str, m) -> None:
        for _ in range(5):
            together[name].append(m.generate(prompt, max_new_tokens=16, do_sample=False))

    threads = [threading.Thread(target=run, args=(name, m)) for name, m in (("tuned", tuned), ("base", base))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for name, outputs in together.items():
        assert len(outputs) == 5 and all(torch.equal(out, alone[name]) for out in outputs), name
    assert not torch.equal(alone["tuned"], alone["base"])


def test_train_head_beside_an_adapter_fits_the_model_with_that_adapter(trained, tmp_path, capsys):
    """``recall train-head --out ADAPTER``: the head is trained on the base with the adapter merged
    in (what loading the adapter gives), not on the base alone. Until 2026-11-30 it was the shipped
    model's whatever the folder held, and the candidate's model refused it."""
    import shutil

    from recall_core.cli import main
    from recall_core.models.query_head import RecallQueryHead

    model, tokenizer, result, _ = trained
    base, out = tmp_path / "tiny", tmp_path / "candidate"
    model.save_pretrained(base)
    tokenizer.save_pretrained(base)
    shutil.copytree(result.adapter, out)
    assert main(["train-head", "--model", str(base), "--out", str(out), "--encoder", "hash-16", "--device", "cpu",
                 "--vocabulary-texts", "0"]) == 0  # fmt: skip
    assert f"with the adapter in {out}" in capsys.readouterr().out
    tuned, _ = load_model(base, device="cpu", adapter=out)
    head = RecallQueryHead.load(out, model=tuned)  # fits the tuned weights...
    with pytest.raises(ValueError, match="fingerprint"):
        head.check(load_model(base, device="cpu")[0])  # ...and not the base's
    found = RecallGenerator.from_pretrained(str(base), device="cpu", adapter=str(out)).query_head
    assert found is not None and found.meta == head.meta  # loading the adapter finds the head beside it
    # load_model(adapter=) + a plain RecallGenerator finds it too, at the first call that needs it
    plain = RecallGenerator(tuned, tokenizer)
    assert plain._query_head_for(RecallConfig()) is None  # query_mode="text": not looked for
    assert plain._query_head_for(RecallConfig(query_mode="hidden")).meta == head.meta
    with pytest.raises(ValueError, match="fingerprint"):  # the base saved with a head for other weights
        shutil.copy(out / "query_head.safetensors", base)
        shutil.copy(out / "query_head.json", base)
        RecallGenerator(load_model(base, device="cpu")[0], tokenizer)._query_head_for(RecallConfig(query_mode="hidden"))


def test_an_adapter_for_another_base_model_is_refused(trained):
    _, tokenizer, result, _ = trained
    other, other_tokenizer = tiny_model(seed=1)
    with pytest.raises(ValueError, match="another base model"):
        apply_adapter(other, other_tokenizer, result.adapter)
    qwen, qwen_tokenizer = tiny_model("qwen2")
    with pytest.raises(ValueError, match="another base model"):
        check_adapter(qwen, qwen_tokenizer, result.adapter)


def test_the_fingerprint_ignores_the_dtype_but_not_the_weights():
    model, _ = tiny_model()
    fingerprint = base_fingerprint(model)
    assert base_fingerprint(tiny_model()[0].to(torch.bfloat16)) == fingerprint
    with torch.no_grad():
        model.model.embed_tokens.weight[0] += 1.0
    assert base_fingerprint(model) != fingerprint


def test_a_damaged_or_missing_adapter_is_a_clear_error(trained, tmp_path):
    _, tokenizer, result, _ = trained
    model, _ = tiny_model()
    with pytest.raises(ValueError, match="not a recall adapter"):
        apply_adapter(model, tokenizer, tmp_path)
    damaged = tmp_path / "damaged"
    damaged.mkdir()
    (damaged / WEIGHTS_FILE).write_bytes((result.adapter / WEIGHTS_FILE).read_bytes())
    (damaged / META_FILE).write_text("{ not json")
    with pytest.raises(ValueError, match="damaged"):
        apply_adapter(model, tokenizer, damaged)


def test_a_model_without_a_chat_template_is_refused(tmp_path):
    model, tokenizer = tiny_model()
    tokenizer.chat_template = None
    with pytest.raises(ValueError, match="no chat template"):
        train_recall(model, tokenizer, tmp_path, small_config(), progress=False)
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize(
    ("field", "value"),
    [("steps", 0), ("batch_size", 0), ("learning_rate", 0.0), ("learning_rate", 2.0), ("rank", 0),
     ("decision_weight", 0), ("max_length", 4), ("targets", ())],
)
def test_bad_training_settings_name_the_field(field, value):
    with pytest.raises(ValueError, match=field):
        TrainConfig(**{field: value})
    with pytest.raises(ValueError, match="repeats"):
        Mixture(repeats=-1)
    with pytest.raises(ValueError, match="auto_share"):
        Mixture(auto_share=1.5)
    with pytest.raises(ValueError, match="exclude leaves no family"):
        TrainConfig(families=("people",), exclude=("people",))
    with pytest.raises(ValueError, match="families"):
        TrainConfig(families=("nope",))


def test_agreement_counts_identical_replies_and_shared_prefixes():
    before = [("a", None, [1, 2, 3, 4], False), ("b", None, [5, 6], False)]
    after = [("a", None, [1, 2, 9, 9], False), ("b", None, [5, 6], False)]
    report = agreement(before, after)
    assert report["identical"] == 0.5 and report["same_first_token"] == 1.0
    assert report["shared_prefix"] == pytest.approx((0.5 + 1.0) / 2)


def test_recall_train_command_on_a_tiny_model(tmp_path, monkeypatch, capsys):
    from recall_core.cli import main

    model, tokenizer = tiny_model()
    model.save_pretrained(tmp_path / "tiny")
    tokenizer.save_pretrained(tmp_path / "tiny")
    monkeypatch.setenv("RECALL_HOME", str(tmp_path / "home"))
    small = ["--examples", "0.004", "--users", "1", "--families", "templated", "--encoder", "hash", "--repeats", "1"]
    code = main(["train", "--model", str(tmp_path / "tiny"), *small, "--steps", "2", "--oldest-share", "0.5",
                 "--company-share", "0.25", "--agreement-prompts", "2", "--device", "cpu", "--no-progress"])  # fmt: skip
    assert code == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["adapter"] == str(tmp_path / "home" / "adapters" / "tiny")
    meta = read_meta(summary["adapter"])
    assert meta["base_model"] == "tiny" and meta["recipe"]["mixture"]["oldest_share"] == 0.5
    assert meta["recipe"]["mixture"]["company_share"] == 0.25
    tokenizer.chat_template = None
    tokenizer.save_pretrained(tmp_path / "plain")
    model.save_pretrained(tmp_path / "plain")
    assert main(["train", "--model", str(tmp_path / "plain"), *small, "--steps", "1", "--no-progress"]) == 2
    assert "no chat template" in capsys.readouterr().err


def test_a_run_killed_while_saving_leaves_the_old_adapter_whole(trained, tmp_path, monkeypatch):
    """The adapter is written beside its folder and moved in at the end: a failure while saving
    (a full disk, a kill) leaves the previous adapter as it was and no half-written one."""
    import shutil

    import recall_core.training.adapter as adapter_module

    _, tokenizer, result, _ = trained
    target = tmp_path / "adapter"
    shutil.copytree(result.adapter, target)
    before = {p.name: p.read_bytes() for p in target.iterdir()}

    def fail(*args, **kwargs):
        raise OSError("No space left on device")

    monkeypatch.setattr(adapter_module, "save_file", fail, raising=False)
    monkeypatch.setattr("safetensors.torch.save_file", fail)
    model, _ = tiny_model()
    with pytest.raises(OSError, match="No space"):
        train_recall(model, tokenizer, target, small_config(), progress=False)
    assert {p.name: p.read_bytes() for p in target.iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["adapter"]  # no staging folder left behind
    check_adapter(tiny_model()[0], tokenizer, target)


class _Scripted(torch.nn.Module):
    """A greedy "model" that writes ``script`` after its prefix: each position's most likely next
    token is the script's while the input follows it, else token 0."""

    def __init__(self, script: list[int], vocab: int) -> None:
        super().__init__()
        self.script, self.vocab = script, vocab
        self.anchor = torch.nn.Parameter(torch.zeros(1))  # a parameter: the device is read from it

    def forward(self, input_ids):
        ids = input_ids[0].tolist()
        logits = torch.zeros(1, len(ids), self.vocab)
        for j in range(len(ids)):
            follows = ids[: j + 1] == self.script[: j + 1] and j + 1 < len(self.script)
            logits[0, j, self.script[j + 1] if follows else 0] = 1.0
        return type("Out", (), {"logits": logits})()


@pytest.mark.parametrize(("via_recall", "reply", "counted"),
                         [(False, family_data.UNKNOWN_REPLY, True), (True, family_data.UNKNOWN_REPLY, True),
                          (True, "Your parrot is called Luna.", False), (False, "Luna.", False)])  # fmt: skip
def test_the_new_user_check_follows_the_greedy_path_through_the_empty_notes(via_recall, reply, counted):
    """The check counts what greedy decoding under "auto" with nothing found would say: straight
    away, or after the model's own <recall> and the loop's empty-notes block."""
    from recall_core.training.lora import dont_know_with_nothing_found

    _, tokenizer = tiny_model()
    builder = ExampleBuilder(tokenizer)
    question = "What is the name of my parrot?"
    example = builder.auto_example("x", [{"role": "user", "content": question}], reply, ())
    start = next(i for i, t in enumerate(example.labels) if t != IGNORE)
    prompt, answer = example.input_ids[:start], example.input_ids[start:]
    script = [*prompt, builder.recall_id, *builder.block(()), *answer] if via_recall else [*prompt, *answer]
    model = _Scripted(script, len(tokenizer))
    assert dont_know_with_nothing_found(model, builder, [question]) == float(counted)
