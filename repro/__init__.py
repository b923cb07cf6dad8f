"""The reproduction suite: one script per paper claim, measured in simjudge on verified success.

Layout (documented on the docs' Reproduction page, ``docs/reproduction.md``):

* ``repro/common.py``: the shared layer (result files, per-item stores, LLM clients behind
  the replay cache, intervals);
* ``repro/<claim>.py``: one script per claim (``python -m repro.robobench`` ...), each with
  ``run()`` (measure; resumable), ``score()`` (the claim's numbers from its stored per-item
  results) and ``replay()`` (re-run items offline from the committed replay cache);
* ``repro/items/<claim>/``: per-item results (committed; what ``score()`` reads);
* ``repro/replay/<claim>/``: the recorded LLM exchanges (committed; one JSON per exchange);
* ``repro/check.py``: ``make repro-replay`` (re-score and replay every claim, no live model);
* ``repro/page.py``: writes ``docs/reproduction.md`` from ``results/<claim>.json``.
"""

__all__: list[str] = []
