"""The LoCoMo tables of BENCHMARKS.md (retrieval hit@k, answers with their cost) and the plots."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks.common.plotting import pyplot, save
from benchmarks.common.results import cell


def markdown(result: dict[str, Any]) -> str:
    """The tables of BENCHMARKS.md: retrieval hit@k per category, and answers with their cost."""
    ks = result["config"]["k"]
    parts = ["### Retrieval: evidence turn in the top k (every question with evidence)", ""]
    head = "| query | k | cat 1 multi-hop | cat 2 temporal | cat 3 open-domain | cat 4 single-hop | **1-4** | cat 5 adversarial | p50 ms |"
    parts += [head, "|" + " --- |" * 9]
    for name, summary in result["retrieval"].items():
        for n in ks:
            hits = summary[f"hit@{n}"]
            cells = [name, str(n), *(cell(hits[str(c)]) for c in (1, 2, 3, 4)), f"**{cell(hits['1-4'])}**",
                     cell(hits["5"]), cell(summary["latency_ms"]["p50"], 1)]
            parts.append("| " + " | ".join(cells) + " |")
    answers = result.get("answers")
    if answers:
        n = answers["sample_size"]
        parts += ["", f"### Answers: {n} questions (seeded, category-stratified), {result['config']['model']}", ""]
        parts += ["| method | F1 cat 1 | cat 2 | cat 3 | cat 4 | **F1 1-4** | cat 5 says no info | "
                  "cat 5, LoCoMo's mapping | cat 5 no info when it is (a) · (b) | prompt tok | injected tok | "
                  "processed tok | TTFT p50 s | total p50 s |", "|" + " --- |" * 14]
        for summary in answers["methods"].values():
            f1 = summary["f1"]
            cells = [summary["label"], *(cell(f1[str(c)]) for c in (1, 2, 3, 4)), f"**{cell(f1['1-4'])}**",
                     cell(summary["adversarial_accuracy"]), cell(summary.get("adversarial_accuracy_official")),
                     by_place(summary.get("adversarial_by_place")),
                     cell(summary["prompt_tokens"]["mean"], 0),
                     cell(summary["injected_tokens"]["mean"], 0), cell(summary["processed_tokens"]["mean"], 0),
                     cell(summary["ttft_s"]["p50"], 2), cell(summary["total_s"]["p50"], 2)]
            parts.append("| " + " | ".join(cells) + " |")
        parts += ["", "Token counts are means per question; processed = prompt + injected. Category 5 asks to "
                  "pick (a) or (b); where \"No information available\" sits is drawn per question, so the split "
                  "shows a model that picks by place rather than by content. \"says no info\" maps a reply that names "
                  "\"(a)\" or \"(b)\" in its first line to that option; LoCoMo's own code maps only a reply that is "
                  "exactly a letter or \"(a)\"/\"(b)\", and scores any other on its text."]
    return "\n".join(parts) + "\n"


def by_place(places: dict[str, dict[str, int]] | None) -> str:
    """``"right/asked (a) · right/asked (b)"`` for category 5 by the no-information option's place."""
    if not places or not any(p["questions"] for p in places.values()):
        return "-"
    return " · ".join(f"{places[k]['right']:g}/{places[k]['questions']}" for k in ("a", "b"))


def plot(result: dict[str, Any], out: Path) -> list[str]:
    """F1 against processed tokens per method, and hit@k per category; returns the PNG paths."""
    plt = pyplot()
    paths = []
    answers = result.get("answers")
    if answers:
        fig, ax = plt.subplots(figsize=(6.4, 4.2))
        for s in answers["methods"].values():
            x, y = s["processed_tokens"]["mean"], s["f1"]["1-4"]
            if x is None or y is None:
                continue
            ax.scatter([x], [y], s=60)
            ax.annotate(s["label"], (x, y), textcoords="offset points", xytext=(6, 4), fontsize=8)
        ax.set_xscale("log")
        ax.set_xlabel("prompt tokens processed per question (prompt + injected, mean, log)")
        ax.set_ylabel("F1, categories 1-4")
        ax.set_title(f"LoCoMo answers, {answers['sample_size']} questions, {result['config']['model']}", fontsize=9)
        ax.grid(alpha=0.3)
        paths.append(str(save(fig, out / "locomo_f1_tokens.png", dpi=110)))
    retrieval = result["retrieval"]
    if retrieval:
        ks = result["config"]["k"]
        fig, axes = plt.subplots(1, len(ks), figsize=(4.2 * len(ks), 3.8), sharey=True)
        axes = axes if len(ks) > 1 else [axes]
        groups = ["1", "2", "3", "4", "1-4", "5"]
        width = 0.8 / max(1, len(retrieval))
        for ax, n in zip(axes, ks, strict=True):
            for i, (name, s) in enumerate(retrieval.items()):
                values = [s[f"hit@{n}"][g] or 0.0 for g in groups]
                ax.bar([j + i * width for j in range(len(groups))], values, width, label=name)
            ax.set_xticks([j + 0.4 - width / 2 for j in range(len(groups))])
            ax.set_xticklabels(["multi-hop", "temporal", "open-dom.", "single-hop", "1-4", "advers."], fontsize=8)
            ax.set_title(f"hit@{n}")
            ax.set_ylim(0, 1)
            ax.grid(axis="y", alpha=0.3)
        axes[0].set_ylabel("share of questions")
        axes[-1].legend(fontsize=7)
        paths.append(str(save(fig, out / "locomo_hits.png", dpi=110)))
    return paths
