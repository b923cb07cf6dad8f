"""Child side of the hostile-corpus harness: compile and call one case, print one JSON line.

Run as ``python -m tests.envs.hostile.run_case MODE CASE_ID SENTINEL_DIR`` from the
repository root. The state API (``api.py``) is small, picklable (module-level, not in
``__main__``) and reads a picklable snapshot, so both modes can run every case.
"""

from __future__ import annotations

import json
import os
import sys
import time


def main(argv: list[str]) -> int:
    """Run one case; print ``{"stage", "error", "message", "seconds"}`` as JSON."""
    mode, case_id, sentinel_dir = argv
    from simjudge.envs.codegen import GeneratedCodeError, compile_reward

    from .api import API, Snapshot
    from .corpus import by_id

    case = by_id(case_id)
    source = case.source.replace("SENTINEL", os.path.join(sentinel_dir, "touched"))
    out: dict[str, object] = {"stage": "check", "error": None, "message": ""}
    start = time.perf_counter()
    print("STARTED", flush=True)
    try:
        compiled = compile_reward(source, API, mode=mode)  # type: ignore[arg-type]
        out["stage"] = "run"
        start = time.perf_counter()
        try:
            first: GeneratedCodeError | None = None
            for _ in range(case.calls):  # more than once: memory must not pile up
                try:
                    compiled(Snapshot())
                except GeneratedCodeError as exc:
                    if case.calls == 1:
                        raise
                    first = first or exc
            if first is not None:
                raise first
            out["stage"] = "done"
        finally:
            compiled.close()
    except GeneratedCodeError as exc:
        out["error"] = type(exc).__name__
        out["message"] = str(exc)[:300]
    except BaseException as exc:  # noqa: BLE001 - reported as an untyped error (an escape)
        out["error"] = f"UNTYPED {type(exc).__name__}"
        out["message"] = str(exc)[:300]
    out["seconds"] = time.perf_counter() - start
    print("RESULT " + json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
