#!/usr/bin/env python3
"""Extract a repository's source files (.py, .ipynb and configs, each under 2 MB)
from a git directory at HEAD into DEST, skipping blobs the snapshot does not hold
(stored snapshots omit large files, so ``git archive`` fails on them).

    python bench/realcode/extract.py GIT_DIR DEST [PREFIX]
"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

KEEP = re.compile(r"(\.py|\.ipynb|\.toml|\.cfg|\.ya?ml|requirements[^/]*\.txt)$")
MAX_BYTES = 2_000_000


def wanted(repo: str, prefix: str) -> list[tuple[str, str]]:
    """(blob sha, path) of the files to extract."""
    listing = subprocess.run(["git", "-C", repo, "ls-tree", "-r", "-l", "HEAD"],
                             capture_output=True, text=True, check=True).stdout
    items = []
    for line in listing.splitlines():
        meta, path = line.split("\t", 1)
        _mode, kind, sha, size = meta.split()
        if (kind == "blob" and path.startswith(prefix) and KEEP.search(path)
                and size.isdigit() and int(size) <= MAX_BYTES):
            items.append((sha, path))
    return items


def extract(repo: str, dest: Path, prefix: str = "") -> int:
    cat = subprocess.Popen(["git", "-C", repo, "cat-file", "--batch"],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    written = 0
    for sha, path in wanted(repo, prefix):
        cat.stdin.write(f"{sha}\n".encode())
        cat.stdin.flush()
        header = cat.stdout.readline().decode().split()
        if len(header) < 3 or header[1] == "missing":
            continue
        data = cat.stdout.read(int(header[2]))
        cat.stdout.read(1)  # the newline after each blob
        target = dest / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        written += 1
    cat.stdin.close()
    cat.wait()
    return written


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        raise SystemExit(__doc__)
    count = extract(sys.argv[1], Path(sys.argv[2]), sys.argv[3] if len(sys.argv) == 4 else "")
    print(f"{sys.argv[1]}: {count} files")
