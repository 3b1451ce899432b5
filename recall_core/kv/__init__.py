"""KV-cache editing: moving and cutting cached keys (sessions), and memories as reusable key/value blocks.

``cache``: rotary arithmetic and span eviction; ``blocks``: a recall's block cut into pieces
computed once; ``memories``: where those pieces are kept (in process, on disk); ``inject``:
splicing them into a live cache (``inject_mode="kv"``).
"""
