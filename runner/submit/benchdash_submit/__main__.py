"""``python -m benchdash_submit``: the same as the ``benchdash-submit`` command."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
