"""Floor workloads for bench/run.py, run as a separate process so that their
wall time is comparable with a whole gnnlint process.

    python bench/_floors.py read  FILELIST   # read every file's bytes
    python bench/_floors.py parse FILELIST   # libcst.parse_module on every file

FILELIST holds one path per line. Prints one JSON object on stdout:
files, bytes, errors (files libcst could not parse), inner_seconds (the loop
alone, without interpreter start and imports).
"""

from __future__ import annotations

import json
import sys
import time


def main(argv: list[str]) -> int:
    if len(argv) != 3 or argv[1] not in ("read", "parse"):
        print(__doc__, file=sys.stderr)
        return 2
    mode, listfile = argv[1], argv[2]
    with open(listfile, encoding="utf-8") as f:
        paths = [line.rstrip("\n") for line in f if line.strip()]

    if mode == "parse":
        import libcst  # imported here: the read floor must not pay for it

    start = time.perf_counter()
    nbytes = 0
    errors = 0
    first_errors: list[str] = []
    for path in paths:
        with open(path, "rb") as f:
            data = f.read()
        nbytes += len(data)
        if mode == "parse":
            try:
                libcst.parse_module(data)
            except Exception as exc:  # noqa: BLE001 — ParserSyntaxError, encodings
                errors += 1
                if len(first_errors) < 5:
                    first_errors.append(f"{path}: {type(exc).__name__}")
    inner = time.perf_counter() - start
    json.dump(
        {
            "mode": mode,
            "files": len(paths),
            "bytes": nbytes,
            "errors": errors,
            "first_errors": first_errors,
            "inner_seconds": inner,
        },
        sys.stdout,
    )
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
