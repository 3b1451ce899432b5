"""The recall decode loop (a ``custom_generate`` callable) and what it calls at a ``<recall>``.

``loop``: the loop itself; ``triggers``: when the loop writes ``<recall>`` itself; ``select``:
choosing memories among the search candidates; ``notes``: the block of notes that is injected;
``hf_compat``: every private transformers API the loop uses.
"""
