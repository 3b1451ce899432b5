"""Tiny random models and an in-memory tokenizer: no download, seconds to build."""

from __future__ import annotations

import functools

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import (
    Gemma3ForCausalLM,
    Gemma3TextConfig,
    GPT2Config,
    GPT2LMHeadModel,
    LlamaConfig,
    LlamaForCausalLM,
    PreTrainedTokenizerFast,
    Qwen2Config,
    Qwen2ForCausalLM,
)

from recall_core.tokens import add_recall_tokens

CHAT_TEMPLATE = (
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>\n'}}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
CORPUS = [
    "The quick brown fox jumps over the lazy dog.",
    "My dog is called Biscuit and my cat is called Pepper.",
    "I live in Lisbon and I work as a nurse at the hospital.",
    "What is my name? Where do I live? What do I do for work?",
    "Remember that my favourite colour is green and I was born in 1990.",
    "user assistant system memory recall <> () [] {} : ; , . ! ? - 0 1 2 3 4 5 6 7 8 9",
] * 4


@functools.lru_cache(maxsize=1)
def _base_tokenizer_json() -> str:
    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        special_tokens=["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(CORPUS, trainer=trainer)
    return tok.to_str()


def tiny_tokenizer() -> PreTrainedTokenizerFast:
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=Tokenizer.from_str(_base_tokenizer_json()),
        bos_token="<|im_start|>",
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
    )
    tokenizer.chat_template = CHAT_TEMPLATE
    return tokenizer


def tiny_model(kind: str = "llama", seed: int = 0, positions: int = 512):
    """A random model of ``kind`` and its tokenizer, recall-ready.

    ``kind``: "llama" (untied output head, grouped-query attention), "gpt2", "qwen2", "qwen2-padded"
    (an embedding with spare rows past the tokenizer's, as Qwen2's releases have, so the recall
    tokens take spare rows instead of new ones) or "gemma3" (an embedding that scales what it reads,
    tied to the output head). ``positions`` is its context window.
    """
    tokenizer = tiny_tokenizer()
    vocab = len(tokenizer)
    torch.manual_seed(seed)
    if kind == "llama":
        config = LlamaConfig(vocab_size=vocab, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                             num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=positions)
        model = LlamaForCausalLM(config)
    elif kind == "gpt2":
        config = GPT2Config(vocab_size=vocab, n_embd=64, n_layer=2, n_head=4, n_positions=positions,
                            bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id)
        model = GPT2LMHeadModel(config)
    elif kind in ("qwen2", "qwen2-padded"):
        spare = 8 if kind == "qwen2-padded" else 0
        config = Qwen2Config(vocab_size=vocab + spare, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                             num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=positions)
        model = Qwen2ForCausalLM(config)
    elif kind == "gemma3":
        config = Gemma3TextConfig(vocab_size=vocab, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                                  num_attention_heads=4, num_key_value_heads=2, head_dim=16,
                                  max_position_embeddings=positions, sliding_window=64,
                                  layer_types=["full_attention"] * 2)  # fmt: skip
        model = Gemma3ForCausalLM(config)
    else:
        raise ValueError(kind)
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.eval()
    add_recall_tokens(model, tokenizer)
    return model, tokenizer
