"""Teaching a model to recall: generated training data, LoRA fine-tuning, the query head.

``recall_core.training.conversations`` generates dated conversations in which users state
personal facts (the data of ``benchmarks/conversations.py`` and of ``recall train``, on
different seeds); ``recall_core.training.prompts`` holds generic prompts that need no memory.
"""
