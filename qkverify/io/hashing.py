"""SHA-256 of weights files, computed once per (path, size, mtime)."""

from __future__ import annotations

import functools
import hashlib
import os
from pathlib import Path


def file_sha256(path: str | Path) -> str:
    """Hex SHA-256 of a file (weights provenance in compact certificates), by
    ``hashlib.file_digest``."""
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


@functools.lru_cache(maxsize=64)
def _cached(path: str, size: int, mtime_ns: int) -> str:
    return file_sha256(path)


def sha256_of(path: str | Path) -> str:
    """Hex SHA-256 of the file's bytes (cached while the file is unchanged)."""
    p = os.fspath(path)
    st = os.stat(p)
    return _cached(os.path.abspath(p), st.st_size, st.st_mtime_ns)
