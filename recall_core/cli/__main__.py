"""``python -m recall_core.cli``: the ``recall`` command."""

import sys

from recall_core.cli import main

sys.exit(main())
