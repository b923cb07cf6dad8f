"""Regenerate (or check) the committed assets: ``python -m simjudge.envs.assetgen``."""

from __future__ import annotations

import argparse
import sys

from .registry import check_in_sync, generate_all

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """Write the assets, or with ``--check`` report files out of sync (exit code 1)."""
    parser = argparse.ArgumentParser(prog="python -m simjudge.envs.assetgen", description=__doc__)
    parser.add_argument(
        "out_dir", nargs="?", default=None, help="assets root (default: package assets)"
    )
    parser.add_argument("--check", action="store_true", help="only compare; do not write")
    args = parser.parse_args(argv)
    if args.check:
        problems = check_in_sync(args.out_dir)
        for line in problems:
            print(line)
        print("in sync" if not problems else f"{len(problems)} file(s) out of sync")
        return 1 if problems else 0
    written = generate_all(args.out_dir)
    print(f"wrote {len(written)} files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
