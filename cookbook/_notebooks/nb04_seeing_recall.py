"""Notebook 04: where memories were injected, and the attention paid to them."""

from __future__ import annotations

from .cells import SETUP, code, md

CELLS = [
    md("""
# 4. Seeing recall: where memories go, and who looks at them

Two pictures, the ones used to debug the loop:

1. **Where** the memories were injected along the sequence (the `<|memory_pad|>` span).
2. **How much** each generated token attended to the injected span: an attention heatmap
   over the positions of the sequence, one row per decoding step.

Attention weights need the eager attention implementation, and `generate()` returns them
when asked (`output_attentions=True, return_dict_in_generate=True`). We call
`model.generate(custom_generate=recall_generate, ...)` directly: the recall loop returns a
`RecallGenerateOutput` (`sequences`, `attentions` per step, and the `recalls` trace).
"""),
    code(SETUP),
    code("""
import matplotlib
import matplotlib.pyplot as plt
import torch
from recall_core import RecallConfig, RecallGenerator, load_model, recall_generate
from recall_core.memory import MemoryStore, MemoryWriter

model, tokenizer = load_model(attn_implementation="eager")
store = MemoryStore.local(MEMORY_DIR)
writer = MemoryWriter(store)
for fact in ["My dog is called Biscuit.", "My sister Ana lives in Porto.", "I work as a nurse."]:
    writer.add_turn("ada", "user", fact)
memory = store.for_user("ada")
"""),
    md("""
Two `<recall>` markers in one conversation, written by hand (`recall_policy="explicit"`):
one in an earlier user turn, one in the turn being answered. At each, the loop injects into
the cache the memory its turn finds.
"""),
    code("""
messages = [
    {"role": "system", "content": "You are a helpful assistant."},
    {"role": "user", "content": "Tell me about my sister.<recall>"},
    {"role": "assistant", "content": "Ana lives in Porto."},
    {"role": "user", "content": "And what is my dog called?<recall>"},
]
config = RecallConfig(recall_policy="explicit")
input_ids = RecallGenerator(model, tokenizer).encode(messages, config=config)  # the chat template
out = model.generate(
    input_ids,
    custom_generate=recall_generate,
    memory=memory,
    recall_config=config,
    recall_tokenizer=tokenizer,
    max_new_tokens=24,
    do_sample=False,
    output_attentions=True,
    return_dict_in_generate=True,
)
sequence = out.sequences[0]
pad_id = tokenizer.convert_tokens_to_ids("<|memory_pad|>")
prompt_len = input_ids.shape[1] + sum(r.length for r in out.recalls)  # prompt + spans injected inside it
answer = tokenizer.decode(sequence[prompt_len:], skip_special_tokens=True)
print("answer:", answer)
for r in out.recalls:
    print(f"recall at {r.position}: {r.text!r} ({r.length} embeddings, score {r.score:.2f})")
"""),
    md("""
## 1. Where the memories went

Each position of `sequences` is a prompt token, an injected memory embedding (pad id), or a
generated token. The loop keeps `len(sequences)` equal to the cache length, so these
positions are exactly the cache's.
"""),
    code("""
is_pad = (sequence == pad_id).numpy()
kind = torch.zeros(len(sequence), dtype=torch.long)
kind[prompt_len:] = 2
kind[torch.from_numpy(is_pad)] = 1
fig, ax = plt.subplots(figsize=(11, 1.8))
colors = matplotlib.colors.ListedColormap(["#d9d9d9", "#e4572e", "#4c72b0"])
ax.imshow(kind[None, :].numpy(), aspect="auto", cmap=colors, vmin=0, vmax=2)
for r in out.recalls:
    ax.annotate(r.text, (r.position + r.length / 2, 0), color="white", ha="center", va="center", fontsize=8)
ax.set_yticks([])
ax.set_xlabel("position in sequence (= KV cache)")
ax.set_title("prompt (grey), injected memories (red), generated tokens (blue)")
fig.tight_layout()
fig.savefig(FIGURES / "04_injection_positions.png", dpi=120)
plt.show()
"""),
    md("""
## 2. How much each generated token attended to the injected span

`out.attentions[t]` holds, per layer, the attention of decoding step `t`: step 0 is the last
prompt forward, later steps read one token each. The row of step `t` is the attention paid
while producing generated token `t`. We average over layers and heads. The bright first
column is the attention sink (the first position, on which most heads put much of their
attention whatever it holds: Xiao et al. 2023, "Efficient Streaming Language Models with
Attention Sinks");
the cyan bands are the injected memories.
"""),
    code("""
steps = []
for step in out.attentions:
    layers = torch.stack([layer[0, :, -1, :] for layer in step])  # [layers, heads, kv]
    steps.append(layers.float().mean(dim=(0, 1)))
width = len(sequence) - 1
heat = torch.zeros(len(steps), width)
for t, row in enumerate(steps):
    heat[t, : row.shape[0]] = row
generated = [tokenizer.decode([int(i)]) for i in sequence[prompt_len:] if int(i) != pad_id]  # one per step

fig, ax = plt.subplots(figsize=(11, 5))
image = ax.imshow(heat.numpy() ** 0.5, aspect="auto", cmap="magma")  # sqrt: let small weights show
for r in out.recalls:
    ax.axvspan(r.position - 0.5, r.position + r.length - 0.5, color="cyan", alpha=0.15)
ax.set_yticks(range(len(generated)))
ax.set_yticklabels([repr(tok) for tok in generated], fontsize=7)
ax.set_xlabel("attended position (cyan: injected memories)")
ax.set_ylabel("generated token")
fig.colorbar(image, label="attention (sqrt)")
fig.tight_layout()
fig.savefig(FIGURES / "04_attention_heatmap.png", dpi=120)
plt.show()
"""),
    code("""
shares = []  # one list per injected memory: its share of each step's attention
for r in out.recalls:
    shares.append([float(row[r.position : r.position + r.length].sum()) for row in steps])
fig, ax = plt.subplots(figsize=(11, 2.8))
bottom = [0.0] * len(steps)
for r, share, color in zip(out.recalls, shares, ["#e4572e", "#f3a712", "#a8c686"]):
    ax.bar(range(len(steps)), share, bottom=bottom, color=color, label=r.text)
    bottom = [b + s for b, s in zip(bottom, share)]
ax.set_xticks(range(len(generated)))
ax.set_xticklabels([repr(tok) for tok in generated], rotation=90, fontsize=7)
ax.set_ylabel("attention on memories")
ax.set_title("share of attention on each injected memory, per generated token")
ax.legend(fontsize=8)
fig.tight_layout()
fig.savefig(FIGURES / "04_attention_share.png", dpi=120)
plt.show()
span_share = bottom
print(f"mean share on {sum(r.length for r in out.recalls)} injected of {width} positions: {sum(span_share) / len(span_share):.3f}")
"""),
    code("""
store.close()
"""),
]
