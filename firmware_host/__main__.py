"""`python -m firmware_host` is `table-host`."""

import sys

from .cli.host import main

if __name__ == "__main__":  # not when a process of its own (web/replays.py) is spawned from it
    sys.exit(main())
