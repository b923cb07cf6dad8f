"""simjudge.judges."""

__all__: list[str] = []
