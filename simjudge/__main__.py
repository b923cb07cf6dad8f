"""``python -m simjudge``: the same command line as the ``simjudge`` script."""

from simjudge.cli import main

raise SystemExit(main())
