"""What `recall train` and `train_recall` refuse, and what they leave behind when a run fails: an
`--out` they would destroy or cannot write (refused before any work), layers the adapters cannot
go on, examples made for another tokenizer, numbers and seeds outside their range, a loss that is
no longer finite; the caller's model after a failure, and a killed save's staging folders.
Tiny random models (tests/helpers/tiny.py): seconds each."""

from __future__ import annotations

import gzip
import json
import math
import re
from pathlib import Path

import pytest
import torch

from recall_core.models.lora import META_FILE, WEIGHTS_FILE, read_meta
from recall_core.training import lora as lora_module
from recall_core.training.examples import ExampleBuilder
from recall_core.training.lora import TrainConfig, train_recall
from tests.helpers.tiny import tiny_model, tiny_tokenizer
from tests.helpers.training import small_config

#: Options of a `recall train` that would run in seconds on a tiny model.
SMALL_TRAINING = ["--steps", "1", "--agreement-prompts", "0", "--device", "cpu", "--no-progress"]
#: With the options that make its data small too (refused with --examples-file, whose data is made).
SMALL_RUN = ["--examples", "0.004", "--users", "1", "--encoder", "hash", "--repeats", "1", *SMALL_TRAINING]


def _no_work(monkeypatch) -> None:
    """Loading a model or building data fails the test: a refusal must come before them."""

    def never(*args, **kwargs):
        raise AssertionError("the work started before the inputs were checked")

    monkeypatch.setattr("recall_core.models.loading.load_model", never)
    monkeypatch.setattr(lora_module, "build_examples", never)
    monkeypatch.setattr(lora_module, "base_replies", never)


def _listing(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def saved_model(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("models") / "tiny"
    model, tokenizer = tiny_model()
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def _examples(tokenizer, families=("templated", "people")):
    """A few hand-made examples: one memory example per family, and a general one."""
    builder = ExampleBuilder(tokenizer)
    question = [{"role": "user", "content": "Where do I live?"}]
    out = [builder.model_example("recall", question, "I don't know.", [], {"family": family}) for family in families]
    out.append(builder.model_example("general", [{"role": "user", "content": "Say hi."}], "Hi.", None,
                                     {"family": "general"}))  # fmt: skip
    return out


# --------------------------------------------------------------------------- --out
def test_train_recall_refuses_an_out_that_is_a_users_folder_or_a_file_and_leaves_it_whole(tmp_path, monkeypatch):
    """Until 2026-12-07 whatever was at `out` was renamed and deleted after the run."""
    work = tmp_path / "my_project"
    (work / "src").mkdir(parents=True)
    (work / "notes.txt").write_text("years of work\n")
    (work / "src" / "main.py").write_text("print('hi')\n")
    report = tmp_path / "report.pdf"
    report.write_text("important file")
    before = _listing(tmp_path)
    _no_work(monkeypatch)
    model, tokenizer = tiny_model()
    with pytest.raises(ValueError, match=r"out .*my_project is a folder that is not a recall adapter.*notes\.txt"):
        train_recall(model, tokenizer, work, small_config(), progress=False)
    with pytest.raises(ValueError, match=r"out .*report\.pdf is a file"):
        train_recall(model, tokenizer, report, small_config(), progress=False)
    assert _listing(tmp_path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["my_project", "report.pdf"]


def test_recall_train_refuses_the_models_folder_or_one_inside_or_around_it_before_loading_it(
        saved_model, tmp_path, monkeypatch, capsys):  # fmt: skip
    from recall_core.cli import main

    before = _listing(saved_model)
    _no_work(monkeypatch)
    for out in (saved_model, saved_model / "adapter", saved_model.parent):
        assert main(["train", "--model", str(saved_model), "--out", str(out), *SMALL_RUN]) == 2
        error = capsys.readouterr().err
        assert "--out" in error and "model's folder" in error, error
    assert _listing(saved_model) == before
    assert not (saved_model / "adapter").exists()


def test_an_out_that_holds_a_previous_adapter_or_nothing_is_accepted_and_replaced_whole(tmp_path):
    from recall_core.training.adapter import check_out

    previous = tmp_path / "previous"
    previous.mkdir()
    (previous / META_FILE).write_text("{}")
    (previous / "stale.txt").write_text("an older run's file")
    (tmp_path / "empty").mkdir()
    assert check_out(previous) == previous and check_out(tmp_path / "empty") == tmp_path / "empty"
    assert check_out(tmp_path / "new" / "adapter") == tmp_path / "new" / "adapter"
    model, tokenizer = tiny_model()
    result = train_recall(model, tokenizer, previous, small_config(steps=1), progress=False)
    assert (result.adapter / WEIGHTS_FILE).is_file() and not (result.adapter / "stale.txt").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty", "new", "previous"]  # no staging folder left


def test_an_out_or_save_examples_that_cannot_be_written_is_refused_before_the_model_is_loaded(
        saved_model, tmp_path, monkeypatch, capsys):  # fmt: skip
    from recall_core.cli import main

    _no_work(monkeypatch)
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    assert main(["train", "--model", str(saved_model), "--out", str(blocker / "adapter"), *SMALL_RUN]) == 2
    assert re.search(r"--out .*a-file/adapter cannot be written", capsys.readouterr().err)
    for target, reason in ((tmp_path / "missing" / "x.jsonl.gz", "does not exist"), (tmp_path, "is a folder")):
        assert main(["train", "--model", str(saved_model), "--save-examples", str(target), *SMALL_RUN]) == 2
        error = capsys.readouterr().err
        assert "--save-examples" in error and reason in error, error
    assert not (tmp_path / "missing").exists()


# --------------------------------------------------------------------------- the caller's model
def test_the_callers_model_is_restored_after_an_interrupt_or_a_failed_save(tmp_path, monkeypatch):
    """The docstring promises the model is left untouched: until 2026-12-07 a Ctrl-C or a failure
    left it with peft's LoRA layers in it and in train mode."""
    model, tokenizer = tiny_model()
    model.train()
    ids = torch.tensor([[1, 5, 7, 9]])
    keys = set(model.state_dict())
    with torch.no_grad():
        plain = model.eval()(input_ids=ids).logits.clone()
    model.train()

    def interrupt(step: int, loss: float) -> None:
        if step == 1:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        train_recall(model, tokenizer, tmp_path / "a", small_config(), progress=False, on_step=interrupt)
    assert model.training and set(model.state_dict()) == keys
    monkeypatch.setattr(lora_module, "save_adapter", lambda *a, **k: (_ for _ in ()).throw(OSError("disk full")))
    with pytest.raises(OSError, match="disk full"):
        train_recall(model, tokenizer, tmp_path / "b", small_config(), progress=False)
    assert model.training and set(model.state_dict()) == keys
    assert not any("lora_" in name for name, _ in model.named_modules())
    with torch.no_grad():
        assert torch.equal(model.eval()(input_ids=ids).logits, plain)
    assert sorted(p.name for p in tmp_path.iterdir()) == []


# --------------------------------------------------------------------------- targets
def _tiny_phi3():
    from transformers import Phi3Config, Phi3ForCausalLM

    tokenizer = tiny_tokenizer()
    torch.manual_seed(0)
    config = Phi3Config(vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512,
                        pad_token_id=tokenizer.pad_token_id)  # fmt: skip
    return Phi3ForCausalLM(config)


def test_the_default_targets_fall_back_to_every_linear_layer_where_the_model_lacks_them():
    """Llama keeps the shipped recipe's names; GPT-2 (c_attn, c_fc) and Phi-3 (fused qkv_proj and
    gate_up_proj) get every linear layer: until 2026-12-07 GPT-2 failed after the data step and
    Phi-3 got adapters on o_proj and down_proj only."""
    from recall_core.training.adapter import DEFAULT_TARGETS, lora_targets

    assert lora_targets(tiny_model()[0], DEFAULT_TARGETS) == (list(DEFAULT_TARGETS), sorted(DEFAULT_TARGETS))
    targets, covered = lora_targets(_tiny_phi3(), DEFAULT_TARGETS)
    assert targets == "all-linear" and covered == ["down_proj", "gate_up_proj", "o_proj", "qkv_proj"]
    targets, covered = lora_targets(tiny_model("gpt2")[0], DEFAULT_TARGETS)
    assert targets == "all-linear" and {"c_attn", "c_fc", "c_proj"} <= set(covered) and "lm_head" not in covered
    assert lora_targets(tiny_model()[0], ("q_proj", "self_attn.v_proj")) == (["q_proj", "self_attn.v_proj"],
                                                                               ["q_proj", "v_proj"])  # fmt: skip


def test_targets_that_name_no_linear_layer_are_refused_before_the_data_is_built(tmp_path, monkeypatch):
    _no_work(monkeypatch)
    model, tokenizer = tiny_model()
    with pytest.raises(ValueError, match=r"targets qkv_proj name no linear layer .*q_proj"):
        train_recall(model, tokenizer, tmp_path / "a", small_config(targets=("q_proj", "qkv_proj")), progress=False)
    assert not (tmp_path / "a").exists()


def test_a_gpt2_model_is_trained_on_every_linear_layer_and_the_recipe_says_so(tmp_path):
    from recall_core.models.lora import apply_adapter

    model, tokenizer = tiny_model("gpt2", positions=1024)
    result = train_recall(model, tokenizer, tmp_path / "a", small_config(steps=2), progress=False)
    meta = read_meta(result.adapter)
    assert meta["recipe"]["targets"] == ["all-linear"] and "c_attn" in meta["adapted_layers"]
    merged = apply_adapter(tiny_model("gpt2", positions=1024)[0], tokenizer, result.adapter)
    with torch.no_grad():
        assert torch.isfinite(merged(input_ids=torch.tensor([[1, 5, 7]])).logits).all()


def test_the_llama_recipe_records_the_default_targets_it_used(tmp_path):
    from recall_core.training.adapter import DEFAULT_TARGETS

    model, tokenizer = tiny_model()
    result = train_recall(model, tokenizer, tmp_path / "a", small_config(steps=1), progress=False)
    meta = read_meta(result.adapter)
    assert meta["recipe"]["targets"] == list(DEFAULT_TARGETS) and meta["adapted_layers"] == sorted(DEFAULT_TARGETS)


# --------------------------------------------------------------------------- examples files
def _other_tokenizer_model(folder: Path) -> None:
    """A tiny model whose tokenizer has three tokens more, so that `<recall>` has another id."""
    from transformers import LlamaConfig, LlamaForCausalLM

    from recall_core.tokens import add_recall_tokens

    tokenizer = tiny_tokenizer()
    tokenizer.add_special_tokens({"additional_special_tokens": ["<a>", "<b>", "<c>"]})
    torch.manual_seed(0)
    model = LlamaForCausalLM(LlamaConfig(vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128,
                                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2))  # fmt: skip
    add_recall_tokens(model, tokenizer)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)


def test_an_examples_file_for_another_tokenizer_is_refused_naming_the_file(tmp_path, capsys):
    """Until 2026-12-07 such a file trained on ids that meant other tokens, without a word."""
    from recall_core.cli import main
    from recall_core.training.lora import load_examples, save_examples

    _, tokenizer = tiny_model()
    examples = _examples(tokenizer)
    path = save_examples(tmp_path / "ex.jsonl.gz", examples, tokenizer, families=("templated", "people"))
    assert load_examples(path, tokenizer=tokenizer) == examples
    _other_tokenizer_model(tmp_path / "other")
    from transformers import AutoTokenizer

    with pytest.raises(ValueError, match=r"ex\.jsonl\.gz was built for another tokenizer.*recall_token_id"):
        load_examples(path, tokenizer=AutoTokenizer.from_pretrained(tmp_path / "other"))
    assert main(["train", "--model", str(tmp_path / "other"), "--examples-file", str(path),
                 "--out", str(tmp_path / "adapter"), *SMALL_TRAINING]) == 2  # fmt: skip
    assert f"examples file {path} was built for another tokenizer" in capsys.readouterr().err
    assert not (tmp_path / "adapter").exists()


def test_an_examples_file_written_before_its_header_loads_and_is_checked_for_ids_past_the_vocabulary(tmp_path):
    from recall_core.training.lora import load_examples

    _, tokenizer = tiny_model()
    examples = _examples(tokenizer)
    old = tmp_path / "old.jsonl.gz"
    with gzip.open(old, "wt") as out:  # the format of the files written before 2026-12-07
        for e in examples:
            out.write(json.dumps({"kind": e.kind, "input_ids": e.input_ids, "labels": e.labels, "meta": e.meta}) + "\n")
    assert load_examples(old) == examples
    with pytest.warns(UserWarning, match="records no tokenizer"):
        assert load_examples(old, tokenizer=tokenizer) == examples
    with gzip.open(old, "wt") as out:
        out.write(json.dumps({"kind": "x", "input_ids": [len(tokenizer) + 3], "labels": [1], "meta": {}}) + "\n")
    with pytest.raises(ValueError, match=r"old\.jsonl\.gz was built for another tokenizer"):
        load_examples(old, tokenizer=tokenizer)


def test_an_examples_file_trains_on_its_own_families_and_the_recipe_records_them(saved_model, tmp_path, capsys):
    """Until 2026-12-07 `--families` was ignored with `--examples-file` while the recipe recorded it."""
    from recall_core.cli import main
    from recall_core.training.lora import save_examples

    _, tokenizer = tiny_model()
    path = save_examples(tmp_path / "ex.jsonl.gz", _examples(tokenizer), tokenizer, families=("templated", "people"))
    run = ["train", "--model", str(saved_model), "--examples-file", str(path), *SMALL_TRAINING]
    assert main([*run, "--families", "templated", "--out", str(tmp_path / "a")]) == 2
    assert "--families cannot be used with --examples-file" in capsys.readouterr().err
    # the options that make data were accepted and ignored, while the recipe recorded them (until 2026-12-07)
    assert main([*run, "--users", "3", "--company-share", "0.9", "--out", str(tmp_path / "a")]) == 2
    assert "--company-share, --users cannot be used with --examples-file" in capsys.readouterr().err
    assert main([*run, "--exclude", "people", "--targets", "q_proj,v_proj", "--out", str(tmp_path / "a")]) == 0
    meta = read_meta(json.loads(capsys.readouterr().out)["adapter"])
    assert meta["recipe"]["families"] == ["templated", "people"] and meta["recipe"]["exclude"] == ["people"]
    assert meta["recipe"]["targets"] == ["q_proj", "v_proj"] and meta["adapted_layers"] == ["q_proj", "v_proj"]
    assert meta["counts"] == {"recall": 1, "general": 1}


def test_examples_of_a_family_the_config_does_not_train_on_are_left_out(tmp_path):
    model, tokenizer = tiny_model()
    examples = _examples(tokenizer, families=("templated", "people", "dates"))
    result = train_recall(model, tokenizer, tmp_path / "a", small_config(steps=1, families=("templated", "dates"),
                          exclude=("dates",)), progress=False, examples=examples)  # fmt: skip
    assert result.counts == {"recall": 1, "general": 1}


# --------------------------------------------------------------------------- numbers and seeds
@pytest.mark.parametrize(("field", "value"), [("decision_weight", math.inf), ("decision_weight", math.nan),
                                              ("learning_rate", True), ("learning_rate", math.nan),
                                              ("seed", 20261124 - 1000), ("seed", -1), ("seed", True)])  # fmt: skip
def test_recipe_numbers_outside_their_range_are_refused_by_name(field, value):
    with pytest.raises(ValueError, match=field):
        TrainConfig(**{field: value})


def test_no_seed_draws_the_evaluation_users():
    """`seed` 20260124 drew the training users from the evaluation seed itself until 2026-12-07."""
    from recall_core.training import family_data

    text = (Path(__file__).parents[2] / "benchmarks" / "heldout.py").read_text()
    assert int(re.search(r"^EVAL_SEED = (\d+)", text, re.M).group(1)) == lora_module.EVAL_SEED
    last = lora_module.EVAL_SEED - family_data.TRAIN_SEED - 1
    assert TrainConfig(seed=last).seed == last
    with pytest.raises(ValueError, match=r"seed must be an int in \[0, 20260124\)"):
        TrainConfig(seed=last + 1)


@pytest.mark.parametrize(("option", "value"), [("--examples", "inf"), ("--examples", "nan"), ("--learning-rate", "nan"),
                                               ("--fill-share", "inf"), ("--examples", "1e9")])  # fmt: skip
def test_non_finite_or_huge_numbers_on_the_command_line_are_refused_by_name(option, value, tmp_path, monkeypatch,
                                                                            capsys):  # fmt: skip
    from recall_core.cli import main

    _no_work(monkeypatch)
    try:
        code = main(["train", "--out", str(tmp_path / "a"), option, value])
    except SystemExit as stop:  # argparse's refusal
        code = stop.code
    assert code == 2
    assert option in capsys.readouterr().err


def test_a_loss_that_stops_being_finite_stops_the_run_and_saves_nothing(tmp_path, monkeypatch):
    """Until 2026-12-07 such a run saved an adapter whose weights were NaN."""
    real = lora_module._loss
    monkeypatch.setattr(lora_module, "_loss", lambda model, batch: real(model, batch) * math.nan)
    model, tokenizer = tiny_model()
    keys = set(model.state_dict())
    with pytest.raises(RuntimeError, match="training stopped at step 1 of 3.*nan.*nothing was saved"):
        train_recall(model, tokenizer, tmp_path / "a", small_config(), progress=False)
    assert not (tmp_path / "a").exists() and set(model.state_dict()) == keys


# --------------------------------------------------------------------------- a killed save
def test_a_save_removes_the_staging_folders_a_killed_save_of_the_same_folder_left(tmp_path):
    """A SIGKILL while saving leaves `.NAME.recall-staging-XXXXXXXX` (and maybe `.NAME.recall-replaced`);
    until 2026-12-07 nothing removed them. Only recall's own names are removed: a second review found
    the first version taking a user's `.NAME-20261207` backup for a staging folder and deleting it."""
    from recall_core.training.adapter import replace_folder

    ours = (".adapter.recall-staging-abc_1234", ".adapter.recall-replaced")
    users = (".adapter-20261207", ".adapter-backup_1", ".adapter-replaced", ".adapter-notes",
             ".adapter.recall-staging-abcdefghi", ".other.recall-staging-abcd1234")  # fmt: skip
    for name in ours + users:
        (tmp_path / name).mkdir()
        (tmp_path / name / "file").write_text(name)
    (tmp_path / "adapter").mkdir()

    def write(staging: Path) -> None:
        (staging / META_FILE).write_text("{}")

    replace_folder(tmp_path / "adapter", write)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([*users, "adapter"])
    assert all((tmp_path / name / "file").read_text() == name for name in users)
    assert (tmp_path / "adapter" / META_FILE).is_file()


def test_an_adapter_folder_that_holds_folders_is_refused_not_replaced(tmp_path):
    """A recall adapter's folder holds files only: `adapters/` itself, holding an adapter and every
    other one, was replaced whole by a re-train until 2026-12-07 (a reviewer)."""
    from recall_core.training.adapter import check_out

    (tmp_path / "adapters" / "other").mkdir(parents=True)
    (tmp_path / "adapters" / META_FILE).write_text("{}")
    (tmp_path / "adapters" / "other" / META_FILE).write_text("{}")
    with pytest.raises(ValueError, match=r"out .*adapters holds a recall adapter and also the folders other"):
        check_out(tmp_path / "adapters")


def test_recall_train_of_the_current_folder_writes_the_adapter_in_a_folder_named_after_it(
        saved_model, tmp_path, monkeypatch):  # fmt: skip
    """`--model .` named its default folder `.`: the adapter went into `adapters/` itself, and a
    later run there deleted every other adapter (a reviewer, 2026-12-07)."""
    from recall_core.cli import main

    monkeypatch.setenv("RECALL_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(saved_model)
    assert main(["train", "--model", ".", *SMALL_RUN]) == 0
    adapters = tmp_path / "home" / "adapters"
    assert sorted(p.name for p in adapters.iterdir()) == ["tiny"] and (adapters / "tiny" / META_FILE).is_file()


def test_recall_train_keeps_an_adapter_of_other_weights_in_its_default_folder(saved_model, tmp_path, monkeypatch, capsys):
    """The default folder is named by the model's folder name alone: `runA/final` and `runB/final`
    replaced each other's adapter until 2026-12-07 (a reviewer); now the second run is refused."""
    from recall_core.cli import main

    monkeypatch.setenv("RECALL_HOME", str(tmp_path / "home"))
    other = tmp_path / "runB" / "tiny"
    model, tokenizer = tiny_model(seed=1)
    model.save_pretrained(other)
    tokenizer.save_pretrained(other)
    assert main(["train", "--model", str(saved_model), *SMALL_RUN]) == 0
    kept = _listing(tmp_path / "home" / "adapters")
    assert main(["train", "--model", str(other), *SMALL_RUN]) == 2
    assert "adapter trained for another base model" in capsys.readouterr().err
    assert _listing(tmp_path / "home" / "adapters") == kept
    assert main(["train", "--model", str(saved_model), *SMALL_RUN]) == 0  # the same weights again: replaced


def test_an_out_with_a_home_folder_or_the_current_folder_is_written_where_it_was_checked(tmp_path, monkeypatch):
    """`~` is expanded in the folder written as in the folder checked (the first version checked
    `~/x` and wrote `./~/x`), and `.` is the current folder by its name (it failed after training)."""
    from recall_core.training.adapter import check_out, replace_folder

    def write(staging: Path) -> None:
        (staging / META_FILE).write_text("{}")

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    work = tmp_path / "work"
    (work / "empty").mkdir(parents=True)
    monkeypatch.chdir(work)
    assert check_out("~/adapters/mine") == tmp_path / "home" / "adapters" / "mine"
    assert replace_folder("~/adapters/mine", write) == tmp_path / "home" / "adapters" / "mine"
    assert (tmp_path / "home" / "adapters" / "mine" / META_FILE).is_file() and not (work / "~").exists()
    monkeypatch.chdir(work / "empty")
    assert check_out(".") == work / "empty"
    assert replace_folder(".", write) == work / "empty"
    assert (work / "empty" / META_FILE).is_file()


def test_a_save_killed_between_its_renames_gets_the_previous_folder_back_first(tmp_path):
    from recall_core.training.adapter import replace_folder

    (tmp_path / ".adapter.recall-replaced").mkdir()
    (tmp_path / ".adapter.recall-replaced" / META_FILE).write_text('{"previous": true}')

    def fail(staging: Path) -> None:
        raise OSError("No space left on device")

    with pytest.raises(OSError, match="No space"):
        replace_folder(tmp_path / "adapter", fail)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["adapter"]
    assert json.loads((tmp_path / "adapter" / META_FILE).read_text()) == {"previous": True}


def test_a_cut_examples_file_is_named_and_a_save_never_leaves_one(tmp_path, monkeypatch):
    """A run killed while saving left a cut file at the path, and reading one raised an uncaught
    EOFError (a reviewer, 2026-12-07)."""
    import gzip

    from recall_core.training import example_files
    from recall_core.training.examples import Example

    examples = [Example("auto", [1, 2, 3], [-100, 2, 3], {"family": "templated"})] * 50
    path = example_files.save_examples(tmp_path / "ex.jsonl.gz", examples)
    whole = path.read_bytes()
    (tmp_path / "cut.jsonl.gz").write_bytes(whole[: len(whole) // 2])
    with pytest.raises(ValueError, match="cut.jsonl.gz is damaged or cut short"):
        example_files.read_examples(tmp_path / "cut.jsonl.gz")

    def killed(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(example_files.os, "replace", killed)
    with pytest.raises(KeyboardInterrupt):
        example_files.save_examples(path, examples[:3])
    assert path.read_bytes() == whole and sorted(p.name for p in tmp_path.iterdir()) == ["cut.jsonl.gz", "ex.jsonl.gz"]
    assert gzip.decompress(whole)


def test_recall_train_names_a_bad_recipe_value_as_its_option(monkeypatch, capsys):
    """The refusal named the Python field ("batch_size must be...") where training.md promises the
    option (a reviewer, 2026-12-07)."""
    from recall_core.cli import main

    _no_work(monkeypatch)
    assert main(["train", "--batch-size", "0", *SMALL_RUN]) == 2
    assert "--batch-size must be an int >= 1, got 0" in capsys.readouterr().err
    # a mixture's field too ("mixture fill_share must be..." until 2026-12-07)
    assert main(["train", "--fill-share", "2", *SMALL_RUN]) == 2
    assert "--fill-share must be in [0, 1], got 2.0" in capsys.readouterr().err


@pytest.mark.parametrize(("option", "value"), [("--steps", "100000000000"), ("--rank", "100000000"),
                                               ("--users", "100000000")])  # fmt: skip
def test_a_recipe_number_past_any_run_is_refused_before_any_work(monkeypatch, capsys, option, value):
    """Only lower bounds were checked: --steps 10**11 planned batches until memory ran out, --rank 10**8
    failed allocating 25 GB after the data step, --users 10**8 built data for ever (a reviewer)."""
    from recall_core.cli import main

    _no_work(monkeypatch)
    assert main(["train", *SMALL_RUN, option, value]) == 2
    assert f"{option} must be an int in [1, " in capsys.readouterr().err


@pytest.mark.timeout(300)  # (with steps, the run never ended)
@pytest.mark.parametrize("steps", [None, 2])
def test_no_examples_left_to_train_on_is_refused_and_an_adapter_there_is_kept(tmp_path, steps):
    """With steps the run planned batches of nothing for ever; without, an untrained adapter replaced
    the one at `out` (until 2026-12-07: a reviewer)."""
    model, tokenizer = tiny_model()
    out = tmp_path / "adapter"
    train_recall(model, tokenizer, out, small_config(steps=1), progress=False, examples=_examples(tokenizer))
    before = _listing(out)
    only_people = [e for e in _examples(tokenizer, families=("people",)) if e.kind == "recall"]
    with pytest.raises(ValueError, match="no examples to train on"):
        train_recall(model, tokenizer, out, small_config(steps=steps, exclude=("people",)), progress=False,
                     examples=only_people)  # fmt: skip
    assert _listing(out) == before


def test_examples_longer_than_max_length_are_left_out_of_a_file_s_too(tmp_path):
    model, tokenizer = tiny_model()
    examples = _examples(tokenizer)
    longest = max(len(e.input_ids) for e in examples)
    short = [e for e in examples if len(e.input_ids) < longest]
    result = train_recall(model, tokenizer, tmp_path / "a", small_config(steps=1, max_length=longest - 1),
                          progress=False, examples=examples)  # fmt: skip
    assert sum(result.counts.values()) == len(short)


@pytest.mark.parametrize(
    ("row", "message"),
    [({"kind": "recall", "input_ids": [1, -2], "labels": [1, 2], "meta": {}}, "line 2: an id or label outside"),
     ({"kind": "recall", "input_ids": [1, 2], "labels": [1, 99999], "meta": {}}, "line 2: an id or label outside"),
     ({"kind": "recall", "input_ids": [1, 2.5], "labels": [1, 2], "meta": {}}, "line 2: input_ids must be a non-empty list of ints"),
     ({"kind": "recall", "input_ids": [], "labels": [], "meta": {}}, "line 2: input_ids must be a non-empty list of ints"),
     ({"kind": "recall", "input_ids": "12", "labels": "12", "meta": {}}, "line 2: input_ids must be"),
     ({"kind": "recall", "input_ids": [1, 2], "labels": [1], "meta": {}}, "line 2: input_ids and labels must have the same length"),
     ({"kind": "recall", "input_ids": [1, 2], "labels": [1, 2], "meta": []}, "line 2: kind must be text and meta an object"),
     ({"kind": "recall", "input_ids": [1, 2], "labels": [1, 2]}, "line 2: no meta"),
     (["recall", [1, 2]], "line 2: an example must be an object")],
)  # fmt: skip
def test_a_malformed_row_of_an_examples_file_is_named_before_any_training(tmp_path, row, message):
    """Such rows failed the run late with raw errors (a label past the vocabulary at the last step)
    or were trained on silently (a float id cut, an empty example; a reviewer, 2026-12-07)."""
    from recall_core.training.lora import load_examples, save_examples

    _, tokenizer = tiny_model()
    path = save_examples(tmp_path / "ex.jsonl.gz", [], tokenizer, families=("templated",))
    with gzip.open(path, "at") as out:
        out.write(json.dumps(row) + "\n")
    with pytest.raises(ValueError, match=re.escape(f"{path}, {message}")):
        load_examples(path, tokenizer=tokenizer)


def test_an_examples_file_records_what_made_its_data_and_the_adapter_s_recipe_says_it(saved_model, tmp_path, capsys):
    """The recipe recorded the command line's defaults, not the data the file was made with (a reviewer)."""
    from recall_core.cli import main

    made = tmp_path / "ex.jsonl.gz"
    assert main(["train", "--model", str(saved_model), "--save-examples", str(made), *SMALL_RUN,
                 "--company-share", "0.5", "--families", "templated", "--seed", "5"]) == 0  # fmt: skip
    capsys.readouterr()
    assert main(["train", "--model", str(saved_model), "--examples-file", str(made), "--out", str(tmp_path / "a"),
                 *SMALL_TRAINING]) == 0  # fmt: skip
    recipe = read_meta(json.loads(capsys.readouterr().out)["adapter"])["recipe"]
    assert (recipe["users"], recipe["encoder"], recipe["mixture"]["company_share"]) == (1, "hash", 0.5)
    assert recipe["mixture"]["repeats"] == 1 and recipe["families"] == ["templated"]
    assert (recipe["seed"], recipe["data_seed"]) == (0, 5)  # the run's order and adapter; the file's data
