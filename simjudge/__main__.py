"""``python -m simjudge``: the same command line as the ``simjudge`` script."""

from simjudge.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
