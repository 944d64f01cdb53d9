"""``python -m relaypass``: the ``relaypass`` command, for environments without its script."""

from relaypass.tools.cli import main

raise SystemExit(main())
