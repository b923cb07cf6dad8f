"""simjudge.tasks."""

__all__: list[str] = []
