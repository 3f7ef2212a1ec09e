"""The kernel against an adversarial user (issue 8, "Found when tried as an adversarial user
would"), certificate format 2: each finding is a test.  Values are derived by hand in the
comments (kernel_fixtures: a head with W_Q = e₀ᵀ, W_K = e₁ᵀ, signature (1, 1, 1))."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from flint import fmpq_mat

import kernel_fixtures as K
from qkverify.cli import main
from qkverify.kernel import verify_document, verify_file
from qkverify.kernel.jsonio import schema
from qkverify.kernel.table import TABLE

MT = "Appendices.MainText."


@pytest.fixture
def weights(tmp_path):
    """(directory, certificate) of the hand-made weights head, its file next to the certificate."""
    cert = K.weights_certificate(tmp_path)
    (tmp_path / "c.json").write_text(json.dumps(cert))
    return tmp_path, cert


def check(doc, d: Path | None = None, dirs=()):
    return verify_document(doc, str(d / "c.json") if d else "<doc>", d, list(dirs))


def write(d: Path, doc, name="m.json") -> str:
    p = d / name
    p.write_text(json.dumps(doc))
    return str(p)


@pytest.fixture(scope="module")
def suite():
    return K.suite_format2()


def test_the_hand_made_weights_certificate_is_valid(weights):
    d, cert = weights
    out = check(cert, d)
    assert out.status == "valid" and out.verdict == "holds" and len(out.declarations) == 3


# ---- a partial re-check never exits 0 by default ------------------------------------


def test_uncheckable_and_undecided_never_exit_0_by_default(weights, tmp_path, capsys):
    from qkverify.search import conjecture, forget_conjecture, resolve
    from qkverify.io.inputs import MatrixInput

    d, cert = weights
    c = conjecture("test_adv_trace_nonneg", check=lambda inp: True, input_kind="matrix")
    try:
        user = resolve(c.name).evaluate(MatrixInput(fmpq_mat([[1]]))).certificate()
    finally:
        forget_conjecture(c.name)
    u = write(tmp_path, user, "user.json")
    assert main(["verify", u]) == 1 and "not checkable" in capsys.readouterr().out
    assert main(["verify", u, "--allow-uncheckable"]) == 0
    # a declaration the schema knows but the kernel's table does not: never valid, exit 1 by default
    unknown = sorted(set(schema()["$defs"]["decl_name"]["enum"]) - set(TABLE))
    if unknown:
        extra = K.mutate(cert, ("declarations",), cert["declarations"] + [
            {"name": unknown[0], "check": unknown[0].replace(MT, "").replace("Appendices.", ""), "hypotheses": {},
             "conclusion": "holds", "evidence": "exact"}])
        out = check(extra, d)
        assert out.status == "not checkable", out
        assert main(["verify", write(d, extra)]) == 1
    # the weights file cannot be found: undecided (exit 3), naming the limit
    (d / "model.safetensors").unlink()
    assert check(cert, d).status == "undecided"
    assert main(["verify", str(d / "c.json")]) == 3
    assert "pass --weights DIR" in capsys.readouterr().out


# ---- strict schema ------------------------------------------------------------------------


def test_unknown_statement_or_declaration_is_schema_invalid(weights):
    d, cert = weights
    for path, value in ((("statement",), "every_head_is_PSD"),
                        (("declarations", 0, "name"), MT + "every_head_is_PSD"),
                        (("declarations", 0, "check"), "every_head_is_PSD"),
                        (("statement",), "user.every_head_is_PSD"),  # a user name in a Lean certificate
                        (("input", "kind"), "user")):
        out = check(K.mutate(cert, path, value), d)
        assert (out.status, out.check) == ("invalid", "schema"), (path, value, out)


def _objects(doc, path=()):
    """Paths of every JSON object inside doc, display and tool aside (display-only)."""
    if isinstance(doc, dict):
        if path in (("display",), ("tool",)):
            return
        yield path
        for k, v in doc.items():
            yield from _objects(v, path + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from _objects(v, path + (i,))


def test_an_extra_field_anywhere_is_invalid(weights, suite):
    d, cert = weights
    docs = [(cert, d)] + [(c, None) for _, c in suite[::7]]
    n = 0
    for doc, base in docs:
        for path in _objects(doc):
            box = doc
            for k in path:
                box = box[k]
            m = K.mutate(doc, path + ("extra",), 1) if path else dict(doc, extra=1)
            out = check(m, base)
            assert (out.status, out.check) == ("invalid", "schema"), (path, out)
            n += 1
    # in particular inside input.tensors[0], which once made the kernel skip the weights file
    out = check(K.mutate(cert, ("input", "tensors", 0, "dtype"), "F32"), d)
    assert (out.status, out.check) == ("invalid", "schema")
    assert n > 100


# ---- false values -------------------------------------------------------------------------


def test_false_signature_or_rank_of_a_weights_head_is_invalid(weights):
    d, cert = weights
    for path, value in ((("declarations", 1, "value"), {"ints": [1, 0, 2]}),   # true: (1, 1, 1)
                        (("declarations", 1, "value"), {"ints": [2, 0, 1]}),
                        (("declarations", 0, "value"), {"bool": False}),         # rank M = 2 = 2n
                        (("declarations", 2, "conclusion"), "fails"),
                        (("declarations", 2, "hypotheses", "hnd"), False),
                        (("input", "n"), 2)):
        assert check(K.mutate(cert, path, value), d).status != "valid", (path, value)
    ranks = [i for i, w in enumerate(cert["witnesses"]) if w["kind"] == "rank"]
    assert check(K.mutate(cert, ("witnesses", ranks[0], "rank"), 1), d).status == "invalid"


def test_tied_head_edited_to_balanced_is_invalid():
    """W_Q = W_K (n = 2, N = 5): rank M = 2 < 2n, S = W_Qᵀ W_Q ⪰ 0 with signature (2, 0, 3)."""
    from qkverify.claims.evaluate import evaluate
    from qkverify.io.inputs import HeadInput

    W = fmpq_mat([[1, 0, 1, 0, 2], [0, 1, 1, -1, 0]])
    cert = json.loads(json.dumps(evaluate("heads_have_balanced_attention", HeadInput(W, W)).certificate()))
    assert check(cert).status == "valid"
    recs = {r["check"]: i for i, r in enumerate(cert["declarations"])}
    assert cert["declarations"][recs["signature"]]["value"] == {"ints": [2, 0, 3]}
    assert cert["declarations"][recs["Nondegenerate"]]["value"] == {"bool": False}
    assert check(K.mutate(cert, ("declarations", recs["signature"], "value"), {"ints": [2, 2, 1]})).status == "invalid"
    assert check(K.mutate(cert, ("declarations", recs["Nondegenerate"], "value"), {"bool": True})).status == "invalid"
    rank = next(i for i, w in enumerate(cert["witnesses"]) if w["kind"] == "rank" and w["of"] == "M")
    assert check(K.mutate(cert, ("witnesses", rank, "rank"), 4)).status == "invalid"
    # Theorem 3 claimed on it, its hypothesis said true: the kernel decides hnd itself
    forged = K.mutate(cert, ("declarations",), cert["declarations"] + [
        {"name": MT + "heads_have_balanced_attention", "check": "heads_have_balanced_attention",
         "hypotheses": {"hnd": True}, "conclusion": "holds", "evidence": "exact"}])
    out = check(forged)
    assert out.status == "invalid" and "hnd" in out.reason


def test_a_declaration_not_stated_for_the_input_is_invalid_not_raised():
    """Definition ``head`` is the output of one *causal* head: on the same head made non-causal (or
    with a second head) it cannot be evaluated.  The kernel once let that NotEvaluable escape from a
    definition's value; it must say invalid (exit 1), naming the declaration."""
    from qkverify.kernel.check import INTERNAL

    p = K.ROOT / "certificates" / "head" / "qkv_positions_n2.json"
    cert = json.loads(p.read_text())
    assert check(cert).status == "valid"
    heads = cert["input"]["heads"]
    for m in (K.mutate(cert, ("input", "heads", 0, "causal"), False),
              K.mutate(cert, ("input", "heads"), heads + heads)):
        out = check(m)
        assert (out.status, out.check) == ("invalid", "declarations[0] (head)") and out.check != INTERNAL, out
        assert "cannot be evaluated on this input" in out.reason


# ---- repeated witnesses and declarations ---------------------------------------------------


def test_repeated_witnesses_and_declarations_are_rejected(weights, suite):
    d, cert = weights
    for doc, base in [(cert, d)] + [(c, None) for _, c in suite[::11]]:
        for i, w in enumerate(doc["witnesses"]):
            out = check(K.mutate(doc, ("witnesses",), doc["witnesses"][:i + 1] + [w] + doc["witnesses"][i + 1:]), base)
            assert out.status == "invalid", out
        for i, r in enumerate(doc["declarations"]):
            out = check(K.mutate(doc, ("declarations",), doc["declarations"] + [r]), base)
            assert out.status == "invalid" and "twice" in out.reason, out


def test_a_false_first_witness_beside_a_true_one_is_rejected(suite):
    """Issue 8: with two profile witnesses only the last was checked.  Now two witnesses of the
    same (kind, of) are refused outright, whichever is true."""
    name, cert = next((n, c) for n, c in suite if any(w["kind"] == "spectrum" for w in c["witnesses"]))
    i = next(i for i, w in enumerate(cert["witnesses"]) if w["kind"] == "spectrum")
    w = cert["witnesses"][i]
    false = K.mutate(w, ("scale",), str(int(w["scale"]) + 1))
    for ws in ([false, w], [w, false]):
        doc = K.mutate(cert, ("witnesses",), cert["witnesses"][:i] + ws + cert["witnesses"][i + 1:])
        out = check(doc)
        assert out.status == "invalid" and "two spectrum witnesses" in out.reason, (name, out)


# ---- display-only is the only free-form place -------------------------------------------


def _free_strings(node, where, out, root):
    """Walk the schema: every object closed (additionalProperties false, or a typed map with
    pattern-named keys), every string an enum, a constant or a pattern -- except the places
    collected in ``out``."""
    if isinstance(node, list):
        for i, x in enumerate(node):
            _free_strings(x, f"{where}/{i}", out, root)
        return
    if not isinstance(node, dict):
        return
    if where.endswith("/properties/display") or where.endswith("/properties/tool") or \
            where.startswith("/$defs/display_value"):
        out.add(where.split("/anyOf")[0] if where.startswith("/$defs/display_value") else where)  # display-only
        return
    t = node.get("type")
    if t == "object" and "properties" in node and node.get("additionalProperties") is not False:
        # a dispatcher on "kind": each kind's branch must be a closed object
        kinds = node["properties"].get("kind", {}).get("enum")
        assert set(node["properties"]) == {"kind"} and kinds, f"{where}: object not closed"
        branches = {b["if"]["properties"]["kind"]["const"]: b["then"]["$ref"] for b in node.get("allOf", [])}
        assert set(branches) == set(kinds), f"{where}: kinds without a closed branch: {set(kinds) ^ set(branches)}"
        for ref in branches.values():
            target = root
            for part in ref.lstrip("#/").split("/"):
                target = target[part]
            assert target.get("additionalProperties") is False, f"{ref}: object not closed"
    if t == "object" and "properties" not in node and where:
        ap = node.get("additionalProperties")
        assert isinstance(ap, dict) and "propertyNames" in node, f"{where}: a map needs typed values and key names"
    if t == "string" and not ({"enum", "const", "pattern"} & set(node)):
        out.add(where)
    for k, v in node.items():
        if k in ("description", "$schema", "$id", "title", "enum", "const", "pattern"):
            continue
        _free_strings(v, f"{where}/{k}", out, root)


#: strings that are data the kernel reads, not text: each a pattern-constrained name, with why it
#: cannot carry an unchecked claim
NAMES = {
    "file_name": "a weights file: the kernel uses a candidate of that name only if its SHA-256 is the "
                 "certificate's, so the name only locates bytes the SHA-256 fixes",
    "tensor_name": "a tensor of that file: the kernel reads it by this name, so its values are what the "
                   "certificate is checked against",
}


def _refs(node, target: str, where: str = ""):
    """Paths in the schema that refer to ``#/$defs/<target>``."""
    if isinstance(node, dict):
        if node.get("$ref") == f"#/$defs/{target}":
            yield where
        for k, v in node.items():
            yield from _refs(v, target, f"{where}/{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _refs(v, target, f"{where}/{i}")


def test_the_schema_has_no_free_form_place_but_display():
    found: set[str] = set()
    s = schema()
    _free_strings(s, "", found, s)
    assert found <= {"/properties/display", "/properties/tool", "/$defs/display_value"}, sorted(found)
    assert s["properties"]["display"]["description"].startswith("display-only")
    # file and tensor names: one constrained definition each -- no directory, no spaces, no prose
    for name in NAMES:
        d = s["$defs"][name]
        assert d["type"] == "string" and d["maxLength"] <= 256 and d["pattern"].startswith("^[A-Za-z0-9_]")
        assert d["pattern"].endswith("]*$") and " " not in d["pattern"]
    assert "/" not in s["$defs"]["file_name"]["pattern"]  # a name, not a path: the same on every machine
    V = jsonschema.Draft202012Validator({"$ref": "#/$defs/file_name", "$defs": s["$defs"]})
    for bad in ("", "../model.safetensors", "/etc/passwd", ".hidden", "dir/model.safetensors",
                "this head is PSD", "x" * 256):
        assert not V.is_valid(bad), bad
    for good in ("model.safetensors", "model-00001-of-00002.safetensors", "SmolLM2-135M-Instruct.Q4_1.gguf"):
        assert V.is_valid(good), good
    # every file / tensor name of every input kind goes through them
    assert sorted(_refs(s, "file_name")) == sorted(
        f"/$defs/input_{k}/properties/file" for k in ("value_head", "rope_weights", "transformer")) + [
        "/$defs/input_weights/properties/tensors/items/properties/file"]
    assert len(list(_refs(s, "tensor_name"))) == 6


def test_display_is_never_read_and_nothing_else_is_free(suite):
    for name, cert in suite[::9]:
        junk = K.mutate(cert, ("display",), {"anything": [1, {"x": None}], "label": "Theorem 99"})
        assert check(junk).status == "valid", name
        assert check(dict(cert, remarks="trust me")).check == "schema"


# ---- weaker but true ----------------------------------------------------------------------


def test_a_weaker_true_certificate_is_valid(weights, suite):
    """Every conclusion stated as undecided (and the verdict with it): true but weaker; the kernel
    accepts it rather than crash."""
    d, cert = weights
    for doc, base in [(cert, d)] + [(c, None) for _, c in suite]:
        weak = json.loads(json.dumps(doc))
        for r in weak["declarations"]:
            r["conclusion"] = "undecided"
        weak["verdict"] = "undecided"
        out = check(weak, base)
        assert (out.status, out.verdict) == ("valid", "undecided"), (out.check, out.reason)


# ---- weights found by SHA-256 among candidates ---------------------------------------------


def test_weights_found_by_sha256_among_candidates(tmp_path):
    from qkverify.models.installed import default_weights_dirs

    dirs = [x for x in default_weights_dirs() if (Path(x) / "model.safetensors").is_file()]
    if not dirs:
        pytest.skip("the default model is not installed")
    # the recorded name is the installed MiniLM's (another SHA-256, a candidate in dirs); the
    # user's model of the same name sits next to the certificate: it must be the one used
    cert = K.weights_certificate(tmp_path)
    assert {t["file"] for t in cert["input"]["tensors"]} == {"model.safetensors"}
    out = check(cert, tmp_path, dirs)
    assert out.status == "valid", out
    p = write(tmp_path, cert, "c.json")
    assert main(["verify", p]) == 0  # the installed model is a candidate of `verify` too
    (tmp_path / "model.safetensors").unlink()
    out = verify_file(p, dirs)
    assert out.status == "undecided" and "other SHA-256" in out.reason
