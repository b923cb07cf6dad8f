"""simjudge.envs: physics backends, scenes, the Gymnasium env, the state API."""

__all__: list[str] = []
