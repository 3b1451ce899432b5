"""Models: loading offline (the embedded default and any HF causal LM), the shipped recall
adapter and query head, and chat templates recall ships."""
