"""The benchmarks behind BENCHMARKS.md: each module is a script, run from the repository root.

    python -m benchmarks.conversations --help
    python -m benchmarks.locomo --retrieval-only

Parts that several scripts share (argument parsing, timing, result files, plots, the peers'
recipes, LoCoMo loading and scoring) live in :mod:`benchmarks.common`. The engine never imports
this package; it is not installed with the wheel.
"""
