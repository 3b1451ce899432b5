"""Structured replies: constrained decoding, tool-call formats, and the plan a reply must follow."""
