"""simjudge.skills."""

__all__: list[str] = []
