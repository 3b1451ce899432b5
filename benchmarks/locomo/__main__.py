"""``python -m benchmarks.locomo``: the command line of :mod:`benchmarks.locomo.cli`."""

from benchmarks.locomo.cli import main

raise SystemExit(main())
