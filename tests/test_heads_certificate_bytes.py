"""Certificate bytes (issue 20): qkverify writes canonical JSON without the
standard library's pure-Python indenting encoder; the bytes must stay those
of ``json.dumps(cert, sort_keys=True, indent=1, ensure_ascii=False)``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from qkverify.certificates import canonical_bytes

ROOT = Path(__file__).resolve().parent.parent


def _ref(doc) -> bytes:
    return (json.dumps(doc, sort_keys=True, indent=1, ensure_ascii=False) + "\n").encode("utf-8")


def test_shipped_certificates_give_the_standard_bytes():
    files = sorted((ROOT / "certificates").rglob("*.json"))[:400]
    assert files
    for f in files:
        doc = json.loads(f.read_text(encoding="utf-8"))
        assert canonical_bytes(doc) == _ref(doc), f


@pytest.mark.parametrize("doc", [
    {"cells": [[-3, 0, 1], [5, 2, 3]], "e": [], "f": {}, "g": [[]], "h": [[1], [True, 2]]},
    {"x": [1.5, -0.0, 1e300, 2 ** 70, None, False, "é\\\"\n"], "y": [{"b": 1, "a": [2]}, []]},
    {"nan": float("nan"), "inf": [float("inf"), float("-inf")], "big": -(2 ** 200)},
    [[1, 2], [3]],
    "text",
])
def test_edge_cases_give_the_standard_bytes(doc):
    assert canonical_bytes(doc) == _ref(doc)
