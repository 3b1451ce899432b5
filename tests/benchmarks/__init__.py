"""Tests of benchmarks/: each script at a tiny scale (tiny random models, the hash encoder)."""
