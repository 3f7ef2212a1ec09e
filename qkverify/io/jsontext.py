r"""JSON text with indent 1 (``json.dumps(obj, indent=1, ensure_ascii=False)``, with or without
``sort_keys``), byte for byte, without the standard library's pure-Python indenting encoder:
some 3x faster on a head's certificate, whose canonical form (sorted keys) is this text
(:func:`qkverify.certificates.canonical_bytes`), and on the heads tables.

Differences from ``json.dumps``: keys must be strings (TypeError otherwise, where json
would convert numbers), and a container that holds itself is not detected (recursion).

>>> indent1({"b": [1, 2.5, None], "a": {"x": "é", "y": []}}, sort_keys=True)
'{\n "a": {\n  "x": "é",\n  "y": []\n },\n "b": [\n  1,\n  2.5,\n  null\n ]\n}'
>>> indent1({"b": [[1, 2], [3]], "a": True})
'{\n "b": [\n  [\n   1,\n   2\n  ],\n  [\n   3\n  ]\n ],\n "a": true\n}'
"""

from __future__ import annotations

import json
from itertools import chain


def indent1(obj, sort_keys: bool = False, memo: dict | None = None) -> str:
    """The text of ``json.dumps(obj, indent=1, ensure_ascii=False, sort_keys=sort_keys)``.

    ``memo`` (a dict the caller keeps for one batch of documents that stay unchanged meanwhile):
    the text of a list or dict met again (the same object at the same depth) is reused.  Raises
    TypeError for a key that is not a string or a value JSON cannot hold."""
    out: list[str] = []
    try:
        _indent1(obj, "\n", out, memo, sort_keys)
    except RecursionError:
        # two frames per level here, one in json's encoder: a document deep enough for this
        # engine's recursion but not for json's gets json's text (or json's error)
        return json.dumps(obj, indent=1, ensure_ascii=False, sort_keys=sort_keys)
    return "".join(out)


_ENC_STR = json.encoder.encode_basestring          # ensure_ascii=False: the C string encoder
#: the C encoder without indentation, for lists of integer lists (a head's cells): its text is
#: re-indented by replacing the separators (integers contain no ',', '[' or ']')
_ENC_COMPACT = json.JSONEncoder(separators=(",", ":")).encode


def _float(o: float) -> str:
    if o != o:
        return "NaN"
    if o in (float("inf"), float("-inf")):
        return "Infinity" if o > 0 else "-Infinity"
    return float.__repr__(o)


#: the text of a scalar by its exact type (json's rules: bool before int, NaN / Infinity spelled as json does)
_SCALARS = {str: _ENC_STR, int: int.__repr__, float: _float, bool: lambda o: "true" if o else "false",
            type(None): lambda o: "null"}


def _scalar(o) -> str:
    f = _SCALARS.get(type(o))
    if f is not None:
        return f(o)
    if isinstance(o, str):
        return _ENC_STR(o)
    if isinstance(o, bool):
        return "true" if o else "false"
    if isinstance(o, int):
        return int.__repr__(o)
    if isinstance(o, float):
        return _float(o)
    raise TypeError(f"Object of type {o.__class__.__name__} is not JSON serializable")


def _int_rows(o: list, inner: str) -> str | None:
    """The text of a non-empty list of non-empty lists of ints (exact type int), None for anything else."""
    if any(type(v) is not list or not v for v in o):
        return None
    if set(map(type, chain.from_iterable(o))) != {int}:
        return None
    i2 = inner + " "
    text = _ENC_COMPACT(o)                               # [[1,2],[3,4]]
    text = text[2:-2].replace("],[", "\x00").replace(",", "," + i2)
    return "[" + inner + "[" + i2 + text.replace("\x00", inner + "]," + inner + "[" + i2) + inner + "]"


#: lists and dicts shorter than this are not worth a memo entry
_MEMO_MIN = 6


def _indent1(o, nl: str, out: list, memo: dict | None, sort: bool) -> None:
    """Append the indent-1, sorted-keys JSON text of ``o`` (``nl`` = newline plus the current indent);
    with ``memo``, the text of a large list or dict is kept by (object id, indent) and reused (the
    objects all stay alive while the caller serializes: an id is not reused meanwhile)."""
    if memo is not None and isinstance(o, (dict, list, tuple)) and len(o) >= _MEMO_MIN:
        key = (id(o), nl)
        text = memo.get(key)
        if text is None:
            sub: list[str] = []
            _emit(o, nl, sub, memo, sort)
            text = memo[key] = "".join(sub)
        out.append(text)
        return
    _emit(o, nl, out, memo, sort)


def _emit(o, nl: str, out: list, memo: dict | None, sort: bool) -> None:
    if isinstance(o, dict):
        if not o:
            out.append("{}")
            return
        inner = nl + " "
        out.append("{")
        first = True
        scalars = _SCALARS
        for k in (sorted(o) if sort else o):
            if not isinstance(k, str):
                raise TypeError("keys must be strings")
            out.append(inner if first else "," + inner)
            first = False
            out.append(_ENC_STR(k))
            out.append(": ")
            v = o[k]
            f = scalars.get(type(v))
            if f is not None:
                out.append(f(v))
            elif isinstance(v, (dict, list, tuple)):
                _indent1(v, inner, out, memo, sort)
            else:
                out.append(_scalar(v))
        out.append(nl + "}")
    elif isinstance(o, (list, tuple)):
        if not o:
            out.append("[]")
            return
        inner = nl + " "
        sep = "," + inner
        kinds = set(map(type, o))
        if kinds == {int}:
            out.append("[" + inner + sep.join(map(int.__repr__, o)) + nl + "]")
            return
        if kinds == {list}:
            text = _int_rows(o, inner)
            if text is not None:
                out.append(text + nl + "]")
                return
        out.append("[")
        first = True
        for v in o:
            out.append(inner if first else sep)
            first = False
            if isinstance(v, (dict, list, tuple)):
                _indent1(v, inner, out, memo, sort)
            else:
                out.append(_scalar(v))
        out.append(nl + "]")
    else:
        out.append(_scalar(o))
