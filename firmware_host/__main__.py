"""`python -m firmware_host` is `table-host`."""

import sys

from .cli.host import main

sys.exit(main())
