"""Sessions: one conversation's KV cache kept between turns, bounded, and pooled per (user, thread).

``session``: :class:`RecallSession`; ``plan``: which messages are new and what is prefilled;
``units``: what the cache stands for; ``evict``: which turns leave a bounded cache; ``pool``:
the sessions an adapter keeps.
"""
