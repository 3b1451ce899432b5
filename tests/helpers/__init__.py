"""Test helpers: tiny random models, fixed memories, adapter fakes."""
