"""Loading trained adapters and query heads from their files: damaged files refused by name before
the model is touched, the base model's fingerprint (dtype-blind, every layer, the shipped adapter's
first format still read), "~" in adapter=, and a head's training at any number of steps."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file

from recall_core import RecallGenerator
from recall_core.memory import HashEncoder
from recall_core.models.loading import DEFAULT_ADAPTER, DEFAULT_MODEL_NAME, load_model
from recall_core.models.lora import (
    CONFIG_FILE,
    META_FILE,
    WEIGHTS_FILE,
    apply_adapter,
    base_fingerprint,
    check_adapter,
    expected_tensors,
    fingerprint_matches,
    legacy_fingerprint,
)
from recall_core.models.query_head import HEAD_FILE, RecallQueryHead
from recall_core.models.query_head import META_FILE as HEAD_META_FILE
from recall_core.paths import models_dir
from recall_core.tokens import MEMORY_PAD_TOKEN, RECALL_TOKEN
from recall_core.training.head import HeadRecipe, fit_head, train_query_head
from tests.helpers.tiny import tiny_model

TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
TEXTS = ["My dog is called Biscuit.", "I live in Lisbon.", "What is my name?", "Where do I live?",
         "My favourite colour is green.", "I work as a nurse.", "What do I do for work?", "I was born in 1990."]  # fmt: skip


def make_adapter(folder: Path, kind: str = "llama", fingerprint: str | None = None) -> Path:
    """A recall adapter for ``tiny_model(kind)`` as ``recall train`` lays it out (peft's two files
    and the meta), with random LoRA weights: no training needed to test how it is read."""
    from peft import LoraConfig, get_peft_model

    model, tokenizer = tiny_model(kind)
    vocab = tokenizer.get_vocab()
    recorded = fingerprint or base_fingerprint(model)
    names = {name.rsplit(".", 1)[-1] for name, _ in model.named_modules()}
    targets = TARGETS if set(TARGETS) <= names else "all-linear"
    config = LoraConfig(r=4, lora_alpha=8, lora_dropout=0.0, target_modules=targets,
                        trainable_token_indices=[vocab[RECALL_TOKEN], vocab[MEMORY_PAD_TOKEN]], task_type="CAUSAL_LM")  # fmt: skip
    peft_model = get_peft_model(model, config)
    torch.manual_seed(1)
    with torch.no_grad():
        for name, param in peft_model.named_parameters():
            if "lora_B" in name:
                param.normal_(0.0, 0.05)
    peft_model.save_pretrained(str(folder), safe_serialization=True, save_embedding_layers=False)
    meta = {"base_fingerprint": recorded, "base_model": f"tiny-{kind}", "format": 1,
            "recall_token_id": vocab[RECALL_TOKEN], "memory_pad_token_id": vocab[MEMORY_PAD_TOKEN]}  # fmt: skip
    (folder / META_FILE).write_text(json.dumps(meta))
    return folder


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A tiny Llama saved as a folder, and an adapter for it."""
    root = tmp_path_factory.mktemp("adapter-files")
    model, tokenizer = tiny_model()
    model.save_pretrained(root / "base")
    tokenizer.save_pretrained(root / "base")
    return root / "base", make_adapter(root / "adapter")


def _weights(folder: Path) -> dict[str, torch.Tensor]:
    return load_file(str(folder / WEIGHTS_FILE))


def _rewrite(folder: Path, change) -> None:
    weights = change(_weights(folder))
    save_file(weights, str(folder / WEIGHTS_FILE), metadata={"format": "pt"})


def _truncate(path: Path, keep: float) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * keep)])


def _first(weights: dict[str, torch.Tensor], part: str) -> str:
    return next(key for key in sorted(weights) if part in key)


def _poisoned(value: float):
    def change(weights):
        key = _first(weights, "lora_B")
        weights[key] = weights[key].clone()
        weights[key][0, 0] = value
        return weights

    return change


def _edit_config(folder: Path, **fields) -> None:
    config = json.loads((folder / CONFIG_FILE).read_text())
    (folder / CONFIG_FILE).write_text(json.dumps({**config, **fields}))


DAMAGES = {
    "weights truncated": (lambda d: _truncate(d / WEIGHTS_FILE, 0.5), WEIGHTS_FILE, "damaged"),
    "weights empty": (lambda d: _truncate(d / WEIGHTS_FILE, 0.0), WEIGHTS_FILE, "damaged"),
    "peft config truncated": (lambda d: _truncate(d / CONFIG_FILE, 0.5), CONFIG_FILE, "damaged"),
    "peft config missing": (lambda d: (d / CONFIG_FILE).unlink(), CONFIG_FILE, "missing"),
    "meta is a list": (lambda d: (d / META_FILE).write_text("[]"), META_FILE, "not an object"),
    "meta without a fingerprint": (lambda d: (d / META_FILE).write_text("{}"), META_FILE, "base_fingerprint"),
    "another rank in the config": (lambda d: _edit_config(d, r=2), WEIGHTS_FILE, "another shape"),
    "one tensor missing": (lambda d: _rewrite(d, lambda w: {k: v for k, v in w.items() if k != _first(w, "v_proj.lora_B")}),
                           WEIGHTS_FILE, "missing"),  # fmt: skip
    "every lora_B missing": (lambda d: _rewrite(d, lambda w: {k: v for k, v in w.items() if "lora_B" not in k}),
                             WEIGHTS_FILE, "missing"),  # fmt: skip
    "the config names layers the model lacks": (lambda d: _edit_config(d, target_modules=["no_such_proj"]), CONFIG_FILE,
                                                "does not fit this model"),  # fmt: skip
    "a tensor left over": (lambda d: _rewrite(d, lambda w: {**w, "base_model.model.extra.lora_A.weight": torch.zeros(4, 4)}),
                           WEIGHTS_FILE, "fit no layer"),  # fmt: skip
    "a NaN weight": (lambda d: _rewrite(d, _poisoned(float("nan"))), WEIGHTS_FILE, "NaN or infinite"),
    "an infinite weight": (lambda d: _rewrite(d, _poisoned(float("inf"))), WEIGHTS_FILE, "NaN or infinite"),
}


@pytest.mark.parametrize("damage", list(DAMAGES))
def test_a_damaged_adapter_file_is_refused_naming_it_and_the_model_is_left_as_it_was(files, tmp_path, damage):
    """Until 2026-12-07 these went through as SafetensorError, JSONDecodeError, AttributeError or a
    size-mismatch RuntimeError naming no file, or loaded: the model with missing tensors equal to
    the plain one (a peft warning only), with NaN weights giving NaN logits."""
    _, adapter = files
    folder = tmp_path / "adapter"
    shutil.copytree(adapter, folder)
    change, file, what = DAMAGES[damage]
    change(folder)
    model, tokenizer = tiny_model()
    before = {name: tensor.clone() for name, tensor in model.state_dict().items()}
    with pytest.raises(ValueError, match=what) as refused:
        apply_adapter(model, tokenizer, folder)
    assert str(folder / file) in str(refused.value)
    state = model.state_dict()
    assert state.keys() == before.keys() and all(torch.equal(state[k], v) for k, v in before.items())
    assert not any("lora" in name for name, _ in model.named_modules())


def test_a_whole_adapter_still_loads_and_changes_the_model(files):
    base, adapter = files
    ids = torch.tensor([[1, 5, 7, 9]])
    with torch.no_grad():
        plain = load_model(base, device="cpu")[0](input_ids=ids).logits
        tuned = load_model(base, device="cpu", adapter=adapter)[0](input_ids=ids).logits
    assert torch.isfinite(tuned).all() and (tuned - plain).abs().max() > 1e-3


@pytest.mark.parametrize("kind", ["gpt2", "qwen2", "qwen2-padded", "gemma3"])
def test_the_tensor_check_accepts_a_whole_adapter_on_every_kind_of_model(tmp_path, kind):
    adapter = make_adapter(tmp_path / "adapter", kind)
    model, tokenizer = tiny_model(kind)
    assert expected_tensors(model, adapter)  # checked, not skipped with a warning
    assert check_adapter(model, tokenizer, adapter)["base_model"] == f"tiny-{kind}"


def test_train_head_on_a_damaged_adapter_exits_2_with_the_files_name(files, tmp_path, capsys):
    from recall_core.cli import main

    base, adapter = files
    out = tmp_path / "candidate"
    shutil.copytree(adapter, out)
    _truncate(out / WEIGHTS_FILE, 0.5)
    assert main(["train-head", "--model", str(base), "--out", str(out), "--encoder", "hash-16", "--device", "cpu",
                 "--vocabulary-texts", "0"]) == 2  # fmt: skip
    err = capsys.readouterr().err
    assert "recall: error:" in err and str(out / WEIGHTS_FILE) in err and "Traceback" not in err
    assert not (out / HEAD_FILE).exists()


def test_train_head_refuses_a_file_as_out_and_a_bad_encoder_before_loading_the_model(files, tmp_path, monkeypatch, capsys):
    """Both were refused after the model's load and every feature (minutes on the real model), the
    file with a bare "[Errno 17] File exists" (a reviewer, 2026-12-07)."""
    from recall_core.cli import main

    def never(*args, **kwargs):
        raise AssertionError("the model was loaded before the arguments were checked")

    monkeypatch.setattr("recall_core.models.loading.load_model", never)
    base, _ = files
    note = tmp_path / "notes.txt"
    note.write_text("mine")
    assert main(["train-head", "--model", str(base), "--out", str(note), "--encoder", "hash-16", "--device", "cpu"]) == 2
    assert "--out" in capsys.readouterr().err and note.read_text() == "mine"
    assert main(["train-head", "--model", str(base), "--out", str(tmp_path / "h"), "--encoder", "no-such-encoder",
                 "--device", "cpu"]) == 2  # fmt: skip
    assert "encoder" in capsys.readouterr().err


# ---------------------------------------------------------------------- `recall ask --adapter`
def test_recall_ask_and_chat_answer_with_an_adapter_merged_in(files, tmp_path, monkeypatch, capsys):
    """`recall ask` and `chat` had no way to use an adapter `recall train` wrote: a user had to write
    Python to try their own candidate. The adapter is merged into --model's plain weights."""
    import recall_core.generator as generator
    from recall_core.cli import main

    base, adapter = files
    loads: list[dict] = []
    real = generator.load_model

    def spy(name_or_path, **kwargs):
        loads.append(kwargs)
        return real(name_or_path, **kwargs)

    monkeypatch.setattr(generator, "load_model", spy)
    store = ["--store", str(tmp_path / "m"), "--encoder", "hash-16", "--user", "ada", "--device", "cpu"]
    assert main(["remember", "hello", *store[:-2]]) == 0  # `ask` uses a store and makes none (a typo's)
    assert main(["ask", *store, "--model", str(base), "--adapter", str(adapter), "--max-new-tokens", "3", "hi"]) == 0
    assert loads[-1]["adapter"] == adapter and loads[-1]["tuned"] is False
    monkeypatch.setattr("builtins.input", lambda prompt="": "")  # `chat` ends at an empty line
    assert main(["chat", *store, "--model", str(base), "--adapter", str(adapter), "--no-write"]) == 0
    assert loads[-1]["adapter"] == adapter
    assert main(["ask", *store, "--model", str(base), "--plain", "--max-new-tokens", "3", "hi"]) == 0
    assert loads[-1]["adapter"] is None and loads[-1]["tuned"] is False
    capsys.readouterr()


def test_recall_ask_refuses_a_missing_or_damaged_adapter_before_answering(files, tmp_path, capsys):
    from recall_core.cli import main

    base, adapter = files
    store = ["--store", str(tmp_path / "m"), "--encoder", "hash-16", "--user", "ada", "--device", "cpu"]
    for bad in (["--adapter", str(tmp_path / "no-such-adapter")], ["--adapter", str(adapter), "--plain"]):
        with pytest.raises(SystemExit) as exit_info:  # at parse time, before a model loads
            main(["ask", *store, "--model", str(base), *bad, "hi"])
        assert exit_info.value.code == 2 and "--adapter" in capsys.readouterr().err
    damaged = tmp_path / "damaged"
    shutil.copytree(adapter, damaged)
    _truncate(damaged / WEIGHTS_FILE, 0.5)
    assert main(["remember", "hello", *store[:-2]]) == 0  # `ask` uses a store and makes none (a typo's)
    capsys.readouterr()
    assert main(["ask", *store, "--model", str(base), "--adapter", str(damaged), "hi"]) == 2
    err = capsys.readouterr().err
    assert "recall: error:" in err and str(damaged / WEIGHTS_FILE) in err and "Traceback" not in err


# ---------------------------------------------------------------------- "~" in adapter=


def test_load_model_expands_the_home_folder_in_adapter_as_in_the_model_path(files, tmp_path, monkeypatch):
    base, adapter = files
    home = tmp_path / "home"
    home.mkdir()
    shutil.copytree(base, home / "base")
    shutil.copytree(adapter, home / "adapter")
    monkeypatch.setenv("HOME", str(home))
    model, _ = load_model("~/base", device="cpu", adapter="~/adapter")
    assert model.recall_adapter_folder == str((home / "adapter").resolve())


# ---------------------------------------------------------------------- the base model's fingerprint


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
def test_an_adapter_fits_the_same_weights_loaded_in_any_float_dtype(files, dtype):
    """Until 2026-12-07 the same base loaded in float16 was refused as "another base model"."""
    base, adapter = files
    model, tokenizer = load_model(base, device="cpu", dtype=dtype)
    check_adapter(model, tokenizer, adapter)


def test_a_fine_tune_of_the_base_in_any_layer_is_another_base_model(files, tmp_path):
    """Until 2026-12-07 only five tensors were read: a fine-tune of v_proj, o_proj and the MLPs of
    every layer passed. Now a change of 1% of one tensor of one layer is seen, in float16 too."""
    base, adapter = files
    for dtype in ("float32", "float16"):
        model, tokenizer = load_model(base, device="cpu", dtype=dtype)
        with torch.no_grad():
            weight = model.model.layers[1].mlp.down_proj.weight
            weight.add_(torch.randn_like(weight) * 0.01 * weight.float().std().to(weight.dtype))
        with pytest.raises(ValueError, match="another base model"):
            check_adapter(model, tokenizer, adapter)
    model, tokenizer = load_model(base, device="cpu")
    with torch.no_grad():
        for name, param in model.named_parameters():
            if any(part in name for part in ("v_proj", "o_proj", "mlp.")):
                param.add_(torch.randn_like(param) * 0.5)
    with pytest.raises(ValueError, match="another base model"):
        check_adapter(model, tokenizer, adapter)
    with torch.no_grad():  # scaled as a whole: no sign flips, the scale moves
        model, tokenizer = load_model(base, device="cpu", dtype="float16")
        model.model.layers[0].post_attention_layernorm.weight.mul_(1.05)
    assert not fingerprint_matches(base_fingerprint(load_model(base, device="cpu")[0]), model)


def test_an_adapter_that_records_the_first_fingerprint_format_is_checked_as_before(tmp_path):
    model, tokenizer = tiny_model()
    adapter = make_adapter(tmp_path / "old", fingerprint=legacy_fingerprint(model))
    check_adapter(model, tokenizer, adapter)
    other, other_tokenizer = tiny_model(seed=1)
    with pytest.raises(ValueError, match="another base model"):
        check_adapter(other, other_tokenizer, adapter)
    assert not json.loads((DEFAULT_ADAPTER / META_FILE).read_text())["base_fingerprint"].startswith("recall-fp")


@pytest.mark.skipif(not (models_dir() / DEFAULT_MODEL_NAME / ".recall-converted").exists(),
                    reason="the default model is not converted in RECALL_HOME (recall fetch-models)")  # fmt: skip
def test_the_shipped_adapter_and_head_still_fit_the_default_model():
    """The shipped adapter and head record the first format: they load without retraining."""
    plain, tokenizer = load_model(tuned=False, device="cpu")
    check_adapter(plain, tokenizer, DEFAULT_ADAPTER)
    tuned, _ = load_model(device="cpu")
    RecallQueryHead.load(DEFAULT_ADAPTER, model=tuned)
    with pytest.raises(ValueError, match="fingerprint"):
        RecallQueryHead.load(DEFAULT_ADAPTER, model=plain)


# ---------------------------------------------------------------------- the query head's files


@pytest.fixture(scope="module")
def head_beside(files, tmp_path_factory):
    """An adapter folder with a head trained for the base with the adapter merged in."""
    base, adapter = files
    folder = tmp_path_factory.mktemp("with-head") / "adapter"
    shutil.copytree(adapter, folder)
    model, tokenizer = load_model(base, device="cpu", adapter=folder)
    train_query_head(model, tokenizer, HashEncoder(16), TEXTS, recipe=HeadRecipe(epochs=3, batch_size=4)).save(folder)
    return base, folder


@pytest.mark.parametrize(
    ("file", "what"), [(HEAD_META_FILE, "damaged"), (HEAD_FILE, "not the weights")],
)
def test_a_damaged_query_head_beside_an_adapter_is_refused_naming_the_file(head_beside, tmp_path, file, what):
    """As a head for other weights is (ValueError, never applied); until 2026-12-07 a raw
    JSONDecodeError or SafetensorError naming no file."""
    base, adapter = head_beside
    folder = tmp_path / "adapter"
    shutil.copytree(adapter, folder)
    assert RecallGenerator.from_pretrained(str(base), device="cpu", adapter=str(folder)).query_head is not None
    _truncate(folder / file, 0.5)
    with pytest.raises(ValueError, match=what) as refused:
        RecallGenerator.from_pretrained(str(base), device="cpu", adapter=str(folder))
    assert str(folder / file) in str(refused.value)


def test_a_head_saved_before_the_digest_with_truncated_weights_is_refused_naming_the_file(head_beside, tmp_path):
    _, adapter = head_beside
    folder = tmp_path / "head"
    shutil.copytree(adapter, folder)
    meta = json.loads((folder / HEAD_META_FILE).read_text())
    del meta["weights_sha256"]
    (folder / HEAD_META_FILE).write_text(json.dumps(meta))
    RecallQueryHead.load(folder)
    _truncate(folder / HEAD_FILE, 0.5)
    with pytest.raises(ValueError, match="damaged") as refused:
        RecallQueryHead.load(folder)
    assert str(folder / HEAD_FILE) in str(refused.value)


def _two_heads(tmp_path: Path) -> tuple[RecallQueryHead, RecallQueryHead]:
    model, tokenizer = tiny_model()
    first = train_query_head(model, tokenizer, HashEncoder(16), TEXTS, recipe=HeadRecipe(epochs=2, batch_size=4), seed=0)
    second = train_query_head(model, tokenizer, HashEncoder(16), TEXTS, recipe=HeadRecipe(epochs=2, batch_size=4), seed=1)
    return first, second


def test_new_head_weights_beside_the_old_meta_are_refused(tmp_path):
    """What a save killed between writing the weights and the meta left: until 2026-12-07 the new
    weights loaded silently with the old meta (same sizes, another head)."""
    first, second = _two_heads(tmp_path)
    first.save(tmp_path / "a")
    second.save(tmp_path / "b")
    shutil.copy(tmp_path / "b" / HEAD_FILE, tmp_path / "a" / HEAD_FILE)
    with pytest.raises(ValueError, match="not the weights"):
        RecallQueryHead.load(tmp_path / "a")


def test_a_save_interrupted_before_the_meta_is_moved_in_never_pairs_new_weights_with_old_meta(tmp_path, monkeypatch):
    import recall_core.models.query_head as query_head

    first, second = _two_heads(tmp_path)
    folder = first.save(tmp_path / "head")
    legacy = json.loads((folder / HEAD_META_FILE).read_text())
    moves = []

    def killed_after_one(source, target):
        if moves:
            raise KeyboardInterrupt  # the process dies between the two moves
        moves.append(Path(target).name)
        shutil.move(source, target)

    monkeypatch.setattr(query_head.os, "replace", killed_after_one)
    with pytest.raises(KeyboardInterrupt):
        second.save(folder)
    assert moves == [HEAD_FILE]  # the weights first, the meta last
    with pytest.raises(ValueError, match="not the weights"):
        RecallQueryHead.load(folder)
    assert not [p for p in folder.iterdir() if p.name.startswith(".")]  # nothing staged is left
    # an old meta without a digest (saved before 2026-12-07) is taken away first: no head, not a mix
    monkeypatch.undo()
    first.save(folder)
    del legacy["weights_sha256"]
    (folder / HEAD_META_FILE).write_text(json.dumps(legacy))
    moves.clear()
    monkeypatch.setattr(query_head.os, "replace", killed_after_one)
    with pytest.raises(KeyboardInterrupt):
        second.save(folder)
    with pytest.raises(ValueError, match="no query head"):
        RecallQueryHead.load(folder)
    monkeypatch.undo()
    second.save(folder)
    assert RecallQueryHead.load(folder).meta == second.meta


# ---------------------------------------------------------------------- a head's training steps


@pytest.mark.parametrize(("epochs", "batch_size"), [(1, 2), (2, 4), (1, 20), (1, 4), (3, 4)])
def test_fit_head_trains_with_any_valid_recipe_ten_steps_included(epochs, batch_size):
    """20 texts: 10 steps in all raised ZeroDivisionError in OneCycleLR until 2026-12-07."""
    torch.manual_seed(0)
    features, targets = torch.randn(20, 1, 8), torch.randn(20, 4)
    head, history = fit_head(features, targets, HeadRecipe(epochs=epochs, batch_size=batch_size), [0])
    assert len(history) == epochs and all(loss == loss for loss in history)
    assert torch.isfinite(head.proj.weight).all()


def test_a_head_whose_training_diverges_is_refused_not_returned():
    """A learning rate too high gave NaN weights, which a save wrote over a good head and loading
    then called damaged (a reviewer, 2026-12-07)."""
    torch.manual_seed(0)
    features, targets = torch.randn(20, 1, 8), torch.randn(20, 4)
    with pytest.raises(RuntimeError, match="diverged .*lower the learning rate.*nothing was saved"):
        fit_head(features, targets, HeadRecipe(epochs=3, batch_size=4, lr=1e30), [0])


def test_what_the_forward_pass_returns_is_not_part_of_the_fingerprint():
    """A model loaded with ``output_hidden_states=True`` or ``output_attentions=True`` (to look at
    attentions) has the same weights: until 2026-12-07 its fingerprint changed, and its adapter and
    the shipped head were refused as "another base model" (a reviewer). Models at the defaults keep
    the fingerprints they had, so those recorded by adapters and heads still match."""
    from recall_core.models.lora import base_fingerprint, legacy_fingerprint

    model, _ = tiny_model()
    before = (base_fingerprint(model), legacy_fingerprint(model))
    model.config._attn_implementation = "eager"
    model.config.output_attentions, model.config.output_hidden_states, model.config.return_dict = True, True, False
    assert (base_fingerprint(model), legacy_fingerprint(model)) == before
