"""``python -m recall_core.cli``: the ``recall`` command."""

import sys

from recall_core.cli import main

if __name__ == "__main__":  # (imported, as the packaging test imports every module, it runs nothing)
    sys.exit(main())
