"""Write the conformance vectors of mechanism files (``conformance/``) from the real library.

Every client of the mechanism file (``clients/js``, and any Kotlin or Swift port) is tested against these files;
``tests/mechfile/test_conformance.py`` checks that they are up to date and that the library agrees with them.
The specification they exercise is ``docs/client_spec.rst``. Deterministic: matrices are built from rationals
(no transcendental function touches a written number but the stated ε and radius, which the library computes),
keys from fixed seeds, sampler words from a seeded generator. Re-run after a change of the format::

    .venv/bin/python tools/make_conformance.py

``conformance/manifest.json`` lists the files with their expected outcome (and, for a release policy, what it
states recomputed), ``canonical.json`` canonical-JSON cases, ``sampler.json`` quantised rows with fixed 64-bit
words and the outputs they must give, ``memo.json`` memoized words and outputs for a test key.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import re
import shutil
import sys
import tempfile
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mechdesign import MechanismFileError  # noqa: E402
from mechdesign._numerics import quantise, quantised_bounds  # noqa: E402
from mechdesign.core import L1Ball, Mechanism, ldp_epsilon, ldp_level, radius_for_delta, required_radius  # noqa: E402
from mechdesign.core._leakage import measure_capacity  # noqa: E402
from mechdesign.deploy.sampling import Privatizer  # noqa: E402
from mechdesign.mechfile import (  # noqa: E402
    MAX_DEPTH,
    achieved_epsilon,
    canonical_bytes,
    canonical_json,
    pretty_json,
    read_mechanism_file,
    verify_mechanism_file,
    write_mechanism_file,
)

PROVENANCE = {"mechdesign": "conformance", "numpy": "conformance", "cvxpy": None}
KEY_SEEDS = {"signer": b"mechdesign conformance signer", "other": b"mechdesign conformance other"}
ACHIEVED_TOLERANCE = 1e-12  # |achieved(client) - achieved(Python)| allowed: float evaluation order and libm differ


def refusal(message: str) -> dict[str, Any]:
    """The field and the stable head of the rule of a one-line loader error (numbers and details dropped).

    ``"<path>: matrix[1] must sum to 1 within 1e-09 (sum is 0.9), got ..."`` → ``{"field": "matrix[1]",
    "rule": "sum to 1 within 1e-09"}``; an error without a field (``"must be valid JSON (...)"``) has field null.
    """
    text = message.split(": ", 1)[1] if ": " in message else message
    match = re.match(r"(?:(?P<field>.+?) )?must (?P<rule>.*)$", text)
    if match is None:
        raise ValueError(f"not a loader error: {message!r}")
    return {"field": match.group("field"), "rule": rule_head(match.group("rule").split(", got ")[0])}


def rule_head(rule: str) -> str:
    """``rule`` without its parenthesised details: every balanced `` (…)`` group (nested groups included).

    ``"sum to 1 within 1e-09 (sum is 0.9)"`` → ``"sum to 1 within 1e-09"``; ``"lie in (0, 1]"`` stays (no
    closing parenthesis); ``"be >= β*(δ, m, N) of [E] eq. 37 (β*(…) = 0.1), or …"`` keeps ``β*(δ, m, N)``,
    which no space precedes.
    """
    out, i = [], 0
    while i < len(rule):
        if rule.startswith(" (", i):
            depth, j = 0, i + 1
            while j < len(rule):
                depth += {"(": 1, ")": -1}.get(rule[j], 0)
                if depth == 0:
                    break
                j += 1
            if j < len(rule):
                i = j + 1
                continue
        out.append(rule[i])
        i += 1
    return "".join(out)


def private_key(name: str) -> Any:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    return Ed25519PrivateKey.from_private_bytes(hashlib.sha256(KEY_SEEDS[name]).digest())


def public_pem(name: str) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return private_key(name).public_key().public_bytes(serialization.Encoding.PEM,
                                                       serialization.PublicFormat.SubjectPublicKeyInfo)


def rational_rows(rows: list[list[Fraction]]) -> np.ndarray:
    """Floats of exact rational rows (each row sums to exactly 1 as rationals; floats within an ulp)."""
    return np.array([[float(x) for x in row] for row in rows])


def krr(n: int, weight: int) -> np.ndarray:
    """k-RR with P(y = x) = weight / (weight + n - 1): rationals, so no libm is involved."""
    total = weight + n - 1
    return rational_rows([[Fraction(weight if i == j else 1, total) for j in range(n)] for i in range(n)])


def seeded_rows(n: int, m: int, seed: int, zeros: int = 0) -> np.ndarray:
    """Rows of random integers over their sum (rationals), with ``zeros`` zero entries per row."""
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(n):
        weights = [int(w) for w in rng.integers(1, 1000, m)]
        for j in rng.choice(m, zeros, replace=False):
            weights[int(j)] = 0
        total = sum(weights)
        rows.append([Fraction(w, total) for w in weights])
    return rational_rows(rows)


def stated(mechanism: Mechanism, guarantee: dict[str, Any]) -> float:
    """The achieved ε rounded up to 10 significant digits (toward privacy; far from any float noise)."""
    achieved = achieved_epsilon(mechanism, guarantee)
    if achieved == 0:
        return 0.0
    digits = 9 - math.floor(math.log10(achieved))
    return math.ceil(achieved * 10**digits) / 10**digits


def labels(prefix: str, n: int) -> list[str]:
    return [f"{prefix}{i}" for i in range(n)]


class Vectors:
    """Collects files and their expected outcomes while writing them."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.files: list[dict[str, Any]] = []
        (folder / "files").mkdir(parents=True)

    def path(self, name: str) -> Path:
        return self.folder / "files" / f"{name}.json"

    def write(self, name: str, mechanism: Mechanism, guarantee: dict[str, Any], **blocks: Any) -> Path:
        full = {"delta": None, "radius": None, "prior": None, "samples": None, **guarantee}
        full.setdefault("epsilon", None)
        if full["epsilon"] is None:
            full["epsilon"] = stated(mechanism, full)
        return write_mechanism_file(self.path(name), mechanism, guarantee=full, provenance=PROVENANCE, **blocks)

    def derive(self, name: str, base: str, edit: Callable[[dict[str, Any]], Any], *, rehash: bool = True) -> Path:
        """A copy of ``base`` edited as an attacker would (the keyless sha256 recomputed unless ``rehash=False``)."""
        content = json.loads(self.path(base).read_text(encoding="utf-8"))
        edit(content)
        if rehash:
            content["sha256"] = hashlib.sha256(canonical_bytes(content)).hexdigest()
        target = self.path(name)
        matrix = content.get("matrix")
        layout = isinstance(matrix, list) and all(isinstance(row, list) for row in matrix)
        target.write_text(pretty_json(content) if layout else json.dumps(content, ensure_ascii=False), encoding="utf-8")
        return target

    def raw(self, name: str, data: bytes) -> Path:
        target = self.path(name)
        target.write_bytes(data)
        return target

    def expect(self, name: str, description: str, public_key: str | None = None,
               client: dict[str, Any] | None = None) -> None:
        """Record what the Python library does with the file (and, if it differs by design, what a client does)."""
        path = self.path(name)
        key = public_pem(public_key) if public_key else None
        entry: dict[str, Any] = {"name": name, "path": f"files/{name}.json", "description": description,
                                 "public_key": public_key}
        try:
            result = verify_mechanism_file(path, public_key=key)
        except MechanismFileError as exc:
            entry["expect"] = {"outcome": "refused", **refusal(str(exc))}
        else:
            entry["expect"] = {"outcome": "holds" if result.holds else "overstated", "notion": result.notion,
                               "epsilon": result.epsilon,
                               "achieved": result.achieved if math.isfinite(result.achieved) else "inf",
                               "sha256": result.sha256}
            if result.release is not None:  # the policy, and what it states recomputed (T releases, one report)
                entry["expect"]["release"] = {k: "inf" if isinstance(val, float) and math.isinf(val) else val
                                              for k, val in result.release.items()}
            if result.notion == "pml":  # the LDP level verify states beside it (issue 40): one text in both
                level = ldp_level([read_mechanism_file(path, verify=False, public_key=key).mechanism])
                entry["expect"]["ldp"] = {**level, "epsilon": level["epsilon"] if math.isfinite(level["epsilon"])
                                          else "inf"}
            if not result.holds:
                with_read = _read_error(path, key)
                entry["expect"].update(with_read)
        if client is not None:
            entry["client_expect"] = client
        self.files.append(entry)


def _read_error(path: Path, key: Any) -> dict[str, Any]:
    try:
        read_mechanism_file(path, public_key=key)
    except MechanismFileError as exc:
        return refusal(str(exc))
    raise AssertionError(f"{path}: overstated but read without error")


def valid_files(vec: Vectors) -> None:
    vec.write("ldp-krr-2", Mechanism.from_matrix(krr(2, 3), ["no", "yes"], ["no", "yes"]),
              {"notion": "ldp"}, utility={"kind": "mutual_information", "value": 0.1})
    vec.expect("ldp-krr-2", "binary randomized response, ε = log 3 rounded up")
    vec.write("ldp-log4", Mechanism.from_matrix([[0.8, 0.2], [0.2, 0.8]], ["a", "b"], ["a", "b"]),
              {"notion": "ldp", "epsilon": math.log(4)})
    vec.expect("ldp-log4", "ε = log 4 asked, the exact LDP level: written as the bound log 4 rounded up, twice")
    vec.write("ldp-krr-16", Mechanism.from_matrix(krr(16, 5), labels("x", 16), labels("y", 16)), {"notion": "ldp"})
    vec.expect("ldp-krr-16", "16-ary randomized response")
    vec.write("ldp-256-outputs", Mechanism.from_matrix(seeded_rows(4, 256, 3), labels("in", 4), labels("out", 256)),
              {"notion": "ldp"})
    vec.expect("ldp-256-outputs", "4 inputs, 256 outputs")
    vec.write("ldp-constant", Mechanism.from_matrix([[0.5, 0.25, 0.25]] * 3, ["p", "q", "r"], ["u", "v", "w"]),
              {"notion": "ldp", "epsilon": 0.0})
    vec.expect("ldp-constant", "identical rows: achieved ε is exactly 0")
    prior4 = [0.4, 0.2, 0.2, 0.2]
    vec.write("pml-4", Mechanism.from_matrix(seeded_rows(4, 4, 4), labels("x", 4), labels("y", 4)),
              {"notion": "pml", "radius": 0.1, "prior": prior4})
    vec.expect("pml-4", "PML over an l1 ball of radius 0.1 (the greedy moves mass from one coordinate)")
    prior16 = [float(Fraction(i + 1, 136)) for i in range(16)]
    vec.write("pml-16", Mechanism.from_matrix(seeded_rows(16, 16, 16, zeros=2), labels("x", 16), labels("y", 16)),
              {"notion": "pml", "radius": 0.6, "prior": prior16}, baselines={"k_rr": 0.5})
    vec.expect("pml-16", "radius 0.6: the greedy empties several coordinates; zero entries")
    prior64 = [float(Fraction(1, 64))] * 64
    vec.write("pml-64", Mechanism.from_matrix(seeded_rows(64, 8, 64), labels("x", 64), labels("y", 8)),
              {"notion": "pml", "radius": 1.5, "prior": prior64})
    vec.expect("pml-64", "64 inputs, 8 outputs, radius 1.5")
    vec.write("pml-whole-simplex", Mechanism.from_matrix(krr(3, 2), ["a", "b", "c"], ["a", "b", "c"]),
              {"notion": "pml", "radius": 2.0, "prior": [0.5, 0.25, 0.25]})
    vec.expect("pml-whole-simplex", "radius 2: the whole simplex, PML capacity = LDP ε")
    beta = radius_for_delta(1e-6, 48842, 3)
    vec.write("pml-delta", Mechanism.from_matrix(krr(3, 4), ["r", "s", "t"], ["r", "s", "t"]),
              {"notion": "pml", "radius": beta, "delta": 1e-6, "samples": 48842, "prior": [0.7, 0.2, 0.1]})
    vec.expect("pml-delta", "(ε, δ)-PML: radius β*(δ, m, N) of [E] eq. 37 asked, written rounded up twice")
    mech = Mechanism.from_matrix(krr(3, 2), ["é", "€", "😀"], ["\u0001\n\"", "\\/", "ü\u2028"])
    vec.write("unicode-labels", mech, {"notion": "ldp"}, certificate={"note": "ünïcödé", "tiny": 1e-7, "big": 1e21})
    vec.expect("unicode-labels", "non-ASCII and escaped labels, numbers 1e-7 and 1e21 in the canonical form")
    # Rows summing to 1 within 1e-9 but not exactly: the loader renormalises them before sampling.
    vec.derive("renormalised-rows", "ldp-krr-2",
               lambda c: c["matrix"].__setitem__(0, [0.7500000002, 0.2500000001]))
    vec.expect("renormalised-rows", "a row summing to 1 + 3e-10: accepted and renormalised")
    for name in ("ldp-krr-2", "pml-4"):
        signed = vec.path(f"{name}-signed")
        shutil.copyfile(vec.path(name), signed)
        from mechdesign.mechfile import sign_mechanism_file

        sign_mechanism_file(signed, private_key("signer"))
        vec.expect(f"{name}-signed", "signed, checked against the signer's key", public_key="signer")
    vec.expect("pml-4-signed", "signed, loaded without a key (the signature is not checked)")
    content = json.loads(vec.path("ldp-krr-2").read_text(encoding="utf-8"))
    content["format"]["version"] = 1
    body = {k: v for k, v in content.items() if k not in ("sha256", "signature")}
    content["sha256"] = hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":"),
                                                  ensure_ascii=False).encode("utf-8")).hexdigest()
    vec.path("version-1").write_text(pretty_json(content), encoding="utf-8")
    vec.expect("version-1", "format version 1 (Python's own serialisation hashed): read by mechdesign; clients "
               "refuse it with 're-save with version 2'",
               client={"outcome": "refused", "field": "format.version", "rule": "be 2"})


def _set(path: list[Any], value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(content: dict[str, Any]) -> None:
        target = content
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return edit


def _del(*path: Any) -> Callable[[dict[str, Any]], None]:
    def edit(content: dict[str, Any]) -> None:
        target = content
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]
    return edit


# (name, base file, edit, rehash, description); each breaks one rule of the loader.
TAMPERS: list[tuple[str, str, Callable[[dict[str, Any]], Any], bool, str]] = [
    ("missing-matrix", "ldp-krr-2", _del("matrix"), True, "a required key is missing"),
    ("extra-key", "ldp-krr-2", _set(["comment"], "hi"), True, "an unknown top-level key"),
    ("format-not-object", "ldp-krr-2", _set(["format"], "mechdesign.core.mechanism"), True, "format is a string"),
    ("format-name", "ldp-krr-2", _set(["format", "name"], "other"), True, "another format name"),
    ("format-version-3", "ldp-krr-2", _set(["format", "version"], 3), True, "a future version"),
    ("format-version-bool", "ldp-krr-2", _set(["format", "version"], True), True, "version true"),
    ("sha256-malformed", "ldp-krr-2", _set(["sha256"], "XYZ"), False, "not 64 lowercase hex digits"),
    ("sha256-wrong", "ldp-krr-2", _set(["sha256"], "0" * 64), False, "a well-formed but wrong hash"),
    ("tampered-matrix", "ldp-krr-2", _set(["matrix", 0], [0.5, 0.5]), False, "content edited, hash not updated"),
    ("tampered-epsilon", "pml-4", _set(["guarantee", "epsilon"], 9.0), False, "ε edited, hash not updated"),
    ("big-integer", "ldp-krr-2", _set(["provenance", "count"], 2**60), False,
     "an integer beyond 2^53 has no canonical form"),
    ("inputs-not-strings", "ldp-krr-2", _set(["inputs"], ["no", 1]), True, "a label that is not a string"),
    ("inputs-empty", "ldp-krr-2", _set(["inputs"], []), True, "no labels"),
    ("outputs-duplicate", "ldp-krr-2", _set(["outputs"], ["no", "no"]), True, "duplicate labels"),
    ("matrix-not-array", "ldp-krr-2", _set(["matrix"], {"a": 1}), True, "matrix is an object"),
    ("matrix-missing-row", "ldp-krr-2", _del("matrix", 1), True, "one row short"),
    ("matrix-ragged", "ldp-krr-16", _set(["matrix", 3], [1.0]), True, "a row of the wrong length"),
    ("matrix-string", "ldp-krr-2", _set(["matrix", 0, 1], "0.25"), True, "an entry that is a string"),
    ("matrix-bool", "ldp-krr-2", _set(["matrix", 1, 0], True), True, "an entry that is true"),
    ("matrix-null", "ldp-krr-2", _set(["matrix", 1, 0], None), True, "an entry that is null"),
    ("matrix-negative", "ldp-krr-2", _set(["matrix", 0], [1.25, -0.25]), True, "a negative entry"),
    ("matrix-above-one", "ldp-krr-2", _set(["matrix", 1], [1.5, 0.5]), True, "an entry above 1"),
    ("matrix-row-sum", "pml-4", _set(["matrix", 2, 0], 0.9), True, "a row summing to more than 1 + 1e-9"),
    ("matrix-row-sum-just-out", "ldp-krr-2", _set(["matrix", 0], [0.750000001, 0.2500000001]), True,
     "a row summing to 1 + 1.1e-9"),
    ("guarantee-not-object", "ldp-krr-2", _set(["guarantee"], [1]), True, "guarantee is an array"),
    ("guarantee-missing-key", "ldp-krr-2", _del("guarantee", "samples"), True, "a guarantee key is missing"),
    ("guarantee-extra-key", "ldp-krr-2", _set(["guarantee", "colour"], 1), True, "an unknown guarantee key"),
    ("notion-unknown", "ldp-krr-2", _set(["guarantee", "notion"], "dp"), True, "notion 'dp'"),
    ("epsilon-negative", "ldp-krr-2", _set(["guarantee", "epsilon"], -1.0), True, "ε < 0"),
    ("epsilon-string", "ldp-krr-2", _set(["guarantee", "epsilon"], "1.1"), True, "ε is a string"),
    ("delta-zero", "pml-delta", _set(["guarantee", "delta"], 0), True, "δ = 0"),
    ("delta-above-one", "pml-delta", _set(["guarantee", "delta"], 1.5), True, "δ > 1"),
    ("radius-above-two", "pml-4", _set(["guarantee", "radius"], 2.5), True, "radius > 2"),
    ("prior-length", "pml-4", _set(["guarantee", "prior"], [0.5, 0.5]), True, "a prior with too few entries"),
    ("prior-sum", "pml-4", _set(["guarantee", "prior"], [0.4, 0.2, 0.2, 0.3]), True, "a prior summing to 1.1"),
    ("prior-negative", "pml-4", _set(["guarantee", "prior"], [0.6, -0.2, 0.4, 0.2]), True, "a negative prior entry"),
    ("samples-zero", "pml-delta", _set(["guarantee", "samples"], 0), True, "m = 0"),
    ("samples-fraction", "pml-delta", _set(["guarantee", "samples"], 1.5), True, "m = 1.5"),
    ("pml-without-prior", "pml-4", _set(["guarantee", "prior"], None), True, "PML without a prior"),
    ("pml-without-radius", "pml-4", _set(["guarantee", "radius"], None), True, "PML without a radius"),
    ("delta-without-samples", "pml-delta", _set(["guarantee", "samples"], None), True, "δ given, m missing"),
    ("radius-below-beta", "pml-delta", _set(["guarantee", "radius"], 0.01), True, "radius below β*(δ, m, N)"),
    ("samples-inflated", "pml-delta", _set(["guarantee", "samples"], 1000), True,
     "fewer samples than claimed: β* grows above the stated radius"),
    ("delta-shrunk", "pml-delta", _set(["guarantee", "delta"], 1e-12), True, "a smaller δ: β* grows"),
    ("utility-not-object", "ldp-krr-2", _set(["utility"], [1, 2]), True, "utility is an array"),
    ("provenance-null", "ldp-krr-2", _set(["provenance"], None), True, "provenance is null"),
    ("signature-not-object", "ldp-krr-2", _set(["signature"], 5), True, "signature is a number"),
    ("epsilon-overstated-ldp", "ldp-krr-2", _set(["guarantee", "epsilon"], 1.0), True,
     "stated ε = 1 below the achieved log 3"),
    ("epsilon-overstated-pml", "pml-16", lambda c: c["guarantee"].update(epsilon=c["guarantee"]["epsilon"] - 1e-6),
     True, "stated ε 1e-6 below the capacity"),
    ("radius-enlarged", "pml-4", _set(["guarantee", "radius"], 0.5), True,
     "a larger ball: the capacity exceeds the stated ε"),
    ("ldp-zero-in-column", "ldp-krr-2", _set(["matrix", 0], [1.0, 0.0]), True,
     "a used output with a zero entry: unbounded LDP ε"),
]


def tampered_files(vec: Vectors) -> None:
    for name, base, edit, rehash, description in TAMPERS:
        vec.derive(name, base, edit, rehash=rehash)
        client = None
        if name.startswith("format-version"):
            client = {"outcome": "refused", "field": "format.version", "rule": "be 2"}
        vec.expect(name, description, client=client)
    text = vec.path("ldp-krr-2").read_bytes()
    vec.raw("not-json", text[:-40])
    vec.expect("not-json", "a truncated file")
    vec.raw("not-utf8", text.replace(b'"no"', b'"n\xff"', 1))
    vec.expect("not-utf8", "a byte that is not UTF-8")
    vec.raw("not-object", b"[1, 2]\n")
    vec.expect("not-object", "a JSON array")
    vec.raw("nan", text.replace(b'"utility": {', b'"utility": {"x": NaN, ', 1))
    vec.expect("nan", "NaN is not JSON")
    vec.raw("huge-number", text.replace(b'"utility": {', b'"utility": {"x": 1e400, ', 1))
    vec.expect("huge-number", "1e400 overflows to infinity: no canonical form")
    vec.raw("lone-surrogate", text.replace(b'"utility": {', b'"utility": {"x": "\\ud800", ', 1))
    vec.expect("lone-surrogate", "a lone surrogate: no canonical form (RFC 8785 needs valid Unicode)")
    signed = "ldp-krr-2-signed"
    vec.derive("signature-wrong-key", signed, lambda c: None, rehash=False)
    vec.expect("signature-wrong-key", "signed by the signer, checked against another key", public_key="other")
    vec.derive("signature-after-edit", signed, _set(["utility", "value"], 0.2), rehash=True)
    vec.expect("signature-after-edit", "content changed after signing (hash recomputed)", public_key="signer")
    vec.derive("signature-algorithm", signed, _set(["signature", "algorithm"], "rsa"), rehash=False)
    vec.expect("signature-algorithm", "an algorithm other than ed25519", public_key="signer")
    vec.derive("signature-not-base64", signed, _set(["signature", "value"], "%%%"), rehash=False)
    vec.expect("signature-not-base64", "a signature value that is not base64", public_key="signer")
    vec.expect("ldp-krr-2", "unsigned, a key given", public_key="signer")
    record_file(vec)


def _raw_epsilon(vec: Vectors, name: str) -> float:
    """The recomputed ε of a written file before rounding up (what a client that forgot the rounding compares)."""
    loaded = read_mechanism_file(vec.path(name))
    g = loaded.guarantee
    if g["notion"] == "ldp":
        return ldp_epsilon(loaded.mechanism)
    return measure_capacity(loaded.mechanism, L1Ball(g["prior"], g["radius"]))


def boundary_files(vec: Vectors) -> None:
    """One rule in every language: the stated ε is at least the recomputed ε rounded up (the verifier's upper bound),
    the radius at least β*(δ, m, N) rounded up. Hair cases within the old 1e-12 allowance, the exact boundaries,
    one ulp below them, and the unrounded values (which a client that skipped the rounding would accept).
    """
    for base, kind in (("pml-4", "PML"), ("ldp-log4", "LDP")):
        bound = verify_mechanism_file(vec.path(base)).achieved
        tag = base.split("-")[0]
        vec.derive(f"{tag}-epsilon-at-bound", base, _set(["guarantee", "epsilon"], bound))
        vec.expect(f"{tag}-epsilon-at-bound", f"{kind}: stated ε equal to the recomputed ε rounded up, exactly")
        vec.derive(f"{tag}-epsilon-ulp-below-bound", base, _set(["guarantee", "epsilon"], math.nextafter(bound, 0)))
        vec.expect(f"{tag}-epsilon-ulp-below-bound", f"{kind}: stated ε one ulp below the rounded-up bound")
        vec.derive(f"{tag}-epsilon-unrounded", base, _set(["guarantee", "epsilon"], _raw_epsilon(vec, base)))
        vec.expect(f"{tag}-epsilon-unrounded", f"{kind}: stated ε equal to the recomputed ε before rounding up")
    bound = verify_mechanism_file(vec.path("pml-16")).achieved
    vec.derive("epsilon-hair-below", "pml-16", _set(["guarantee", "epsilon"], bound - 5e-13))
    vec.expect("epsilon-hair-below", "stated ε 5e-13 below the achieved ε (within the 1e-12 clients once allowed)")
    g = read_mechanism_file(vec.path("pml-delta")).guarantee
    beta = radius_for_delta(g["delta"], g["samples"], 3)
    required = required_radius(g["delta"], g["samples"], 3)
    for name, radius, description in (
            ("radius-at-bound", required, "radius equal to β*(δ, m, N) rounded up, exactly"),
            ("radius-ulp-below-bound", math.nextafter(required, 0), "radius one ulp below β* rounded up"),
            ("radius-at-beta-star", beta, "radius equal to β*(δ, m, N) before rounding up"),
            ("radius-hair-below", required - 9e-13, "radius 9e-13 below β* (within the 1e-12 clients once allowed)")):
        vec.derive(name, "pml-delta", _set(["guarantee", "radius"], radius))
        vec.expect(name, description)


def _nested(depth: int) -> Callable[[dict[str, Any]], None]:
    """Nest ``provenance.nest`` so that the file's arrays and objects reach ``depth`` (file and provenance: 2)."""
    def edit(content: dict[str, Any]) -> None:
        value: Any = []
        for _ in range(depth - 3):
            value = [value]
        content["provenance"]["nest"] = value
    return edit


def hardening_files(vec: Vectors) -> None:
    """What a careful verifier refuses beyond the schema (issue 38): nesting beyond MAX_DEPTH, a key repeated in an
    object, a field added to the (unhashed) signature, labels that are one text under Unicode NFC."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(20_000)  # to hash and write the deep files here; readers refuse them before parsing
    try:
        for depth, description in ((MAX_DEPTH, "arrays and objects nested exactly the limit deep: read"),
                                   (MAX_DEPTH + 1, "nested one level beyond the limit (re-hashed)"),
                                   (2000, "nested 2,000 deep (re-hashed): refused before parsing")):
            vec.derive(f"depth-{depth}", "ldp-krr-2", _nested(depth))
            vec.expect(f"depth-{depth}", description)
    finally:
        sys.setrecursionlimit(limit)
    text = vec.path("pml-4").read_text(encoding="utf-8")
    stated = re.search(r'"epsilon": ([^,]+),', text)
    assert stated is not None
    vec.raw("duplicate-key", text.replace(stated.group(0), f'"epsilon": 9.0, {stated.group(0)}', 1).encode("utf-8"))
    vec.expect("duplicate-key", "guarantee.epsilon given twice (the hash covers the last copy, which holds)")
    text = vec.path("ldp-krr-2").read_text(encoding="utf-8")
    vec.raw("duplicate-top-key", text.replace('"inputs":', '"inputs": ["yes", "no"], "inputs":', 1).encode("utf-8"))
    vec.expect("duplicate-top-key", "inputs given twice, the first copy swapped (the hash covers the last copy)")
    vec.derive("signature-extra-field", "ldp-krr-2-signed", _set(["signature", "trusted"], True), rehash=False)
    vec.expect("signature-extra-field", "a field added to the signature, checked against the signer's key",
               public_key="signer")
    vec.expect("signature-extra-field", "a field added to the signature, no key given")
    vec.derive("labels-nfc", "ldp-krr-2", _set(["inputs"], ["caf\u00e9", "cafe\u0301"]))
    vec.expect("labels-nfc", "inputs 'café' (NFC, one code point) and 'café' (NFD, e + U+0301): one text, two labels")


def record_file(vec: Vectors) -> None:
    """A product and an attribute-sampled record file (issue 20): mechdesign reads them with read_record_file; the
    single-column loader and clients refuse them in one line naming the field."""
    from mechdesign.core import JointPrior
    from mechdesign.mechfile import write_record_file

    prior = JointPrior.from_table([[30, 10], [5, 55]], ["a", "b"], [["u", "v"], ["s", "t"]])
    factors = [Mechanism.from_matrix(krr(2, 3), ["u", "v"], ["u", "v"]),
               Mechanism.from_matrix(krr(2, 3), ["s", "t"], ["s", "t"])]
    write_record_file(vec.path("record-product"), prior, epsilon=2.2, radius=0.2, factors=factors,
                      provenance=PROVENANCE)
    vec.expect("record-product", "a product record file (attributes, alphabets, factors; no joint matrix)",
               client={"outcome": "refused", "field": "factors",
                       "rule": "be absent: record files are not supported by this client"})
    write_record_file(vec.path("record-sampled"), prior, epsilon=1.2, radius=0.2, factors=factors,
                      sampling=[0.25, 0.75], provenance=PROVENANCE)
    vec.expect("record-sampled", "an attribute-sampled record file (factors and sampling probabilities)",
               client={"outcome": "refused", "field": "factors",
                       "rule": "be absent: record files are not supported by this client"})


def release_files(vec: Vectors) -> None:
    """Files with a release policy (issue 37): memoized, two-layer and repeated, what each states recomputed, and
    malformed release blocks. Clients verify them as mechdesign does, except a repeated statement whose count
    vectors exceed what a client enumerates (it refuses that one: the safe verdict)."""
    memo = Mechanism.from_matrix(krr(3, 4), ["red", "green", "blue"], ["r", "g", "b"])
    vec.write("release-memoized", memo, {"notion": "ldp"}, release={"policy": "memoized"})
    vec.expect("release-memoized", "release policy 'memoized': the same (user, value) always gets the same output")
    from mechdesign.mechfile import key_id

    vec.write("release-memoized-keyed", memo, {"notion": "ldp"},
              release={"policy": "memoized", "key": key_id(MEMO_TEST_KEY)})
    vec.expect("release-memoized-keyed", "memoized and bound to the test key of memo.json (release.key, its id): "
               "privatize with any other key is refused")
    reports = Mechanism.from_matrix(krr(3, 2), ["r", "g", "b"], ["R", "G", "B"])
    vec.write("release-two-layer", memo, {"notion": "ldp"}, release={"policy": "two-layer", "reports": reports})
    vec.derive("release-two-layer-overstated", "release-two-layer", _set(["release", "epsilon"], 0.3))
    vec.expect("release-two-layer-overstated", "a per-report epsilon 0.3 below the LDP level of W1 W2 (re-hashed)")
    vec.write("release-two-layer-pml", memo, {"notion": "pml", "prior": [0.5, 0.3, 0.2], "radius": 0.2},
              release={"policy": "two-layer", "reports": reports})
    vec.expect("release-two-layer-pml", "two layers under PML: the per-report epsilon is the capacity of W1 W2")
    linkability_files(vec, memo, reports)
    pml = Mechanism.from_matrix(seeded_rows(4, 5, 7, zeros=2), labels("x", 4), labels("y", 5))
    guarantee = {"notion": "pml", "prior": [0.4, 0.3, 0.2, 0.1], "radius": 0.05}
    vec.write("release-repeated", pml, guarantee, release={"policy": "repeated", "releases": 3})
    vec.expect("release-repeated", "release policy 'repeated': the exact leakage of 3 releases of the same value "
               "(every count vector) is stated and recomputed; here the identity bound -log(min P - radius/2) is "
               "the smaller")

    def understate(content: dict[str, Any]) -> None:
        content["release"]["epsilon"] = content["guarantee"]["epsilon"]  # one release's ε stated for three
    vec.derive("release-repeated-understated", "release-repeated", understate)
    vec.expect("release-repeated-understated", "a repeated-release statement of one release's ε for three, below "
               "the exact account (re-hashed)")
    dense = Mechanism.from_matrix(seeded_rows(4, 5, 7), labels("x", 4), labels("y", 5))
    vec.write("release-repeated-30", dense, {**guarantee, "radius": 0.2},
              release={"policy": "repeated", "releases": 30})
    vec.expect("release-repeated-30", "30 releases: 46,376 count vectors, the account set by the enumeration "
               "(no trivial bound is smaller)")
    vec.write("release-repeated-ldp", Mechanism.from_matrix(krr(3, 4), ["a", "b", "c"], ["a", "b", "c"]),
              {"notion": "ldp"}, release={"policy": "repeated", "releases": 7})
    vec.expect("release-repeated-ldp", "an LDP file's 7 releases: 7 times its LDP level, rounded up")
    many = Mechanism.from_matrix(seeded_rows(2, 6, 11), ["u", "v"], labels("y", 6))
    vec.write("release-repeated-many", many, {"notion": "pml", "prior": [0.6, 0.4], "radius": 0.1},
              release={"policy": "repeated", "releases": 40})
    vec.expect("release-repeated-many", "40 releases over 6 outputs: 1,221,759 count vectors, enumerated by "
               "mechdesign, beyond what a client enumerates (it refuses)",
               client={"outcome": "refused", "field": "release.releases",
                       "rule": "be at most what this client verifies exactly"})
    for name, base, edit, description in RELEASE_TAMPERS:
        vec.derive(name, base, edit)
        vec.expect(name, f"{description} (re-hashed)")


def linkability_files(vec: Vectors, memo: Mechanism, reports: Mechanism) -> None:
    """Two-layer files and their linkability level (issue 45): stated and recomputed, absent (an old file, W₂ = I:
    infinite), understated, W₂ edited past the stated level, a signed file whose level was raised."""
    from mechdesign.mechfile import sign_mechanism_file

    vec.expect("release-two-layer", "two layers: the matrix memoized (lifetime), reports drawn fresh from W2 "
               "(per report), the linkability level of W2 on W1's outputs stated (written by default)")
    identity = Mechanism.from_matrix(np.eye(3), ["r", "g", "b"], ["R", "G", "B"])
    vec.write("release-two-layer-no-link", memo, {"notion": "ldp"},
              release={"policy": "two-layer", "reports": identity})
    vec.expect("release-two-layer-no-link", "two layers with W2 = I: the linkability level is infinite and the file "
               "states none (as files written before it existed); verify prints the level")
    vec.derive("release-two-layer-link-understated", "release-two-layer", _set(["release", "link_epsilon"], 0.5))
    vec.expect("release-two-layer-link-understated", "a link epsilon 0.5 below W2's level ln e^2 (re-hashed)")

    vec.write("release-two-layer-slack", memo, {"notion": "ldp"},
              release={"policy": "two-layer", "reports": reports, "epsilon": 1.0})
    vec.expect("release-two-layer-slack", "two layers stating a per-report epsilon of 1, above what W1 W2 needs")

    def sharpen(content: dict[str, Any]) -> None:
        content["release"]["reports"]["matrix"][0] = [0.5, 0.3, 0.2]  # column 3: 0.5 / 0.2, beyond the stated 2
    vec.derive("release-two-layer-link-reports-edited", "release-two-layer-slack", sharpen)
    vec.expect("release-two-layer-link-reports-edited", "W2's first row edited: the per-report epsilon still holds, "
               "the linkability level ln 2.5 exceeds the stated ln 2 (re-hashed)")
    signed = vec.path("release-two-layer-signed")
    shutil.copyfile(vec.path("release-two-layer"), signed)
    sign_mechanism_file(signed, private_key("signer"))
    vec.expect("release-two-layer-signed", "a signed two-layer file, checked against the signer's key",
               public_key="signer")
    vec.derive("release-two-layer-link-tampered", "release-two-layer-signed",
               _set(["release", "link_epsilon"], 5.0), rehash=True)
    vec.expect("release-two-layer-link-tampered", "the signed file's link epsilon raised to 5 and re-hashed: the "
               "signature no longer matches", public_key="signer")


#: The memo key of memo.json and of the key-bound file (public: a test key, never a deployment's).
MEMO_TEST_KEY = hashlib.sha256(b"mechdesign conformance memo key").digest()


# (name, base file, edit, description): malformed release blocks, each breaking one rule of read_release.
RELEASE_TAMPERS: list[tuple[str, str, Callable[[dict[str, Any]], Any], str]] = [
    ("release-not-object", "release-memoized", _set(["release"], "memoized"), "release is a string"),
    ("release-policy-unknown", "release-memoized", _set(["release", "policy"], "daily"), "an unknown policy"),
    ("release-extra-key", "release-memoized", _set(["release", "releases"], 3), "a key the policy does not take"),
    ("release-randomness", "release-memoized", _set(["release", "randomness"], "hmac-sha256"),
     "another memoization scheme"),
    ("release-key-malformed", "release-memoized-keyed", _set(["release", "key"], "ABC"),
     "a key id that is not 32 lowercase hex digits"),
    ("release-key-on-repeated", "release-repeated", _set(["release", "key"], "0" * 32),
     "a key id on a policy without memoization"),
    ("release-link-on-memoized", "release-memoized", _set(["release", "link_epsilon"], 1.0),
     "a link epsilon on a policy without a fresh layer"),
    ("release-link-negative", "release-two-layer", _set(["release", "link_epsilon"], -1.0), "a negative link epsilon"),
    ("release-link-string", "release-two-layer", _set(["release", "link_epsilon"], "inf"), "a link epsilon as text"),
    ("release-releases-fraction", "release-repeated", _set(["release", "releases"], 3.0),
     "T written as 3.0 (a JSON number with a fraction is no integer)"),
    ("release-releases-zero", "release-repeated", _set(["release", "releases"], 0), "T = 0"),
    ("release-epsilon-negative", "release-repeated", _set(["release", "epsilon"], -1.0), "a negative ε_T"),
    ("release-reports-missing-row", "release-two-layer", _del("release", "reports", "matrix", 2),
     "W2 one row short of the file's outputs"),
    ("release-reports-row-sum", "release-two-layer", _set(["release", "reports", "matrix", 1, 0], 0.5),
     "a row of W2 summing to 1.25"),
    ("release-reports-outputs", "release-two-layer", _set(["release", "reports", "outputs"], ["R", "R", "B"]),
     "duplicate report labels"),
]


def memo_cases(vec: Vectors) -> dict[str, Any]:
    """Memoized words and outputs (mechdesign.deploy.sampling._memo) for a fixed test key and the memoized file."""
    from mechdesign.deploy.sampling import MemoFunction, user_ids

    loaded = read_mechanism_file(vec.path("release-memoized"))
    from mechdesign.mechfile import key_id

    key = MEMO_TEST_KEY
    memo = MemoFunction(key, loaded.sha256)
    sampler = Privatizer(loaded.mechanism)
    users = ["u", "alice", "0123456789abcde", "0123456789abcdef", "0123456789abcdef0", "x" * 32, "y" * 33,
             "42", "-7", "18446744073709551616", "ünïcödé", "用户", "a b,c", "e\u0301", "\u00e9"]
    cases = []
    for attribute in (0, 1, 5):
        for i, user in enumerate(users):
            value = (i + attribute) % 3
            word = int(memo.words(attribute, user_ids([user]), [value])[0])
            case = {"attribute": attribute, "user": user, "value": value, "word": str(word)}
            if attribute == 0:
                case["input"] = loaded.mechanism.inputs[value]
                case["output"] = loaded.mechanism.outputs[int(sampler.sample_words([value], [word])[0])]
            cases.append(case)
    return {"scheme": "mechdesign-memo-1", "key": key.hex(), "key_id": key_id(key),
            "file": "files/release-memoized.json", "file_sha256": loaded.sha256, "cases": cases,
            "two_layer": _two_layer_cases(vec, key, users)}


def _two_layer_cases(vec: Vectors, key: bytes, users: list[str]) -> dict[str, Any]:
    """The permanent outputs of a two-layer file (attribute 0): deterministic, unlike the fresh reports drawn from
    them (which a client tests by their distribution)."""
    from mechdesign.deploy.sampling import MemoFunction, user_ids

    loaded = read_mechanism_file(vec.path("release-two-layer"))
    memo = MemoFunction(key, loaded.sha256)
    sampler = Privatizer(loaded.mechanism)
    values = [i % 3 for i in range(len(users))]
    words = memo.words(0, user_ids(users), values)
    permanent = sampler.sample_memoized(values, user_ids(users), memo)
    cases = [{"user": user, "value": x, "word": str(int(word)), "input": loaded.mechanism.inputs[x],
              "permanent": loaded.mechanism.outputs[int(y)]}
             for user, x, word, y in zip(users, values, words, permanent, strict=True)]
    return {"file": "files/release-two-layer.json", "file_sha256": loaded.sha256, "cases": cases}


def canonical_cases() -> list[dict[str, Any]]:
    """JSON texts with their RFC 8785 bytes and SHA-256 (RFC examples and the numbers a mechanism file holds)."""
    texts = [
        '{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001], '
        '"string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/", "literals": [null, true, false]}',
        '{"\\u20ac": "Euro Sign", "\\r": "Carriage Return", "\\ufb33": "Hebrew Letter Dalet With Dagesh", '
        '"1": "One", "\\ud83d\\ude00": "Emoji: Grinning Face", "\\u0080": "Control", '
        '"\\u00f6": "Latin Small Letter O With Diaeresis"}',
        '{"delta": 1e-06, "epsilon": 1.0, "radius": 0.1, "samples": 48842, "zero": -0.0, "big": 1e21, '
        '"tiny": 1e-7, "max": 9007199254740991, "neg": -9007199254740991}',
        '[5e-324, 1.7976931348623157e+308, 9.999999999999997e+22, 1e+23, 0.1, 0.2, 0.30000000000000004, '
        '1424953923781206.2, -0.0000033333333333333333, 2.9514790517935283e+20, 9007199254740992.0]',
        '{"b": [], "a": {}, "c": [{}, []], "d": "\\u007f\\u2028\\u2029\\t\\b\\f"}',
    ]
    refused = ['{"samples": 9007199254740992}', '[-9007199254740992]', '{"x": "\\ud800"}', '{"\\udc00": 1}',
               '{"x": 1e400}']
    out: list[dict[str, Any]] = []
    for text in texts + refused:
        try:
            data = canonical_json(json.loads(text))
        except ValueError:  # no canonical form: integers beyond 2^53 - 1 (as written), lone surrogates, infinity
            out.append({"json": text, "canonical": None, "sha256": None})
            continue
        out.append({"json": text, "canonical": data.decode("utf-8"), "sha256": hashlib.sha256(data).hexdigest()})
    return out


def sampler_cases(vec: Vectors, names: list[str]) -> list[dict[str, Any]]:
    """For each input of each file: its quantised row and words at every boundary, with the outputs they give."""
    rng = np.random.default_rng(21)
    cases = []
    for name in names:
        loaded = read_mechanism_file(vec.path(name))
        sampler = Privatizer(loaded.mechanism)
        rows = []
        for x, label in enumerate(loaded.mechanism.inputs):
            q = quantise(loaded.mechanism.matrix[x])
            bounds = [int(b) for b in quantised_bounds(q)]
            words = sorted({0, 2**64 - 1, *bounds, *(b - 1 for b in bounds if b > 0),
                            *(int(w) for w in rng.integers(0, 2**64 - 1, 6, dtype=np.uint64, endpoint=True))})
            outputs = sampler.sample_words([x] * len(words), words)
            rows.append({"input": label, "quantised": [str(v) for v in q], "words": [str(w) for w in words],
                         "outputs": [loaded.mechanism.outputs[int(y)] for y in outputs]})
        sampled = sampler.check(loaded.guarantee)
        cases.append({"file": f"files/{name}.json", "sampled_achieved": sampled, "rows": rows})
    return cases


# Values of the environment variables both languages read: ASCII white space around a value is trimmed, nothing else
# (U+FEFF, U+00A0, U+001C-U+001F, U+0085 are not white space here), and only ASCII letters are case-folded.
ENVIRONMENT_VALUES = {
    "MECHDESIGN_MAX_FILE_MB": ["64", " 64 ", "\t66\n", "\v1e1\f", "+2", ".5", "1.", "\u00a064", "\ufeff64",
                               "64\ufeff", "\x1c64", "64\x1f", "\u008564", "\u200964", "\u300064", "1_0", "inf",
                               "", " ", "0x10", "\u0666\u0666", "-1", "0", "1e400", "6 4"],
    "MECHDESIGN_REQUIRE_SIGNATURE": ["1", "0", " yes ", "TRUE", "\tNo\n", "", "false", "\ufeffyes", "\x1cyes",
                                     "yes\u0085", "\u00a01", "\u0130", "\uff59\uff45\uff53", "on", "2"],
}


def environment_cases() -> dict[str, list[dict[str, Any]]]:
    """For each value of each variable: mechdesign's verdict (the cap in bytes, whether a signature is required) or
    its one-line refusal."""
    import os
    from types import SimpleNamespace

    from mechdesign._files import max_file_bytes
    from mechdesign.cli._io import signature_required

    readers = {"MECHDESIGN_MAX_FILE_MB": ("bytes", max_file_bytes),
               "MECHDESIGN_REQUIRE_SIGNATURE": ("required", lambda: signature_required(
                   SimpleNamespace(require_signature=False, public_key="key.pem")))}
    out: dict[str, list[dict[str, Any]]] = {}
    for name, values in ENVIRONMENT_VALUES.items():
        key, read = readers[name]
        saved = os.environ.pop(name, None)
        cases = []
        try:
            for value in values:
                os.environ[name] = value
                try:
                    cases.append({"value": value, key: read(), "error": None})
                except ValueError as error:
                    cases.append({"value": value, key: None, "error": str(error)})
        finally:
            os.environ.pop(name, None)
            if saved is not None:
                os.environ[name] = saved
        out[name] = cases
    return out


def write_vectors(folder: Path) -> None:
    """Write every vector into ``folder`` (which must not exist)."""
    vec = Vectors(folder)
    valid_files(vec)
    tampered_files(vec)
    boundary_files(vec)
    hardening_files(vec)
    release_files(vec)
    from tools.make_structured_conformance import write_structured

    write_structured(folder / "structured", refusal)  # structured (symmetric) files, issue 43
    (folder / "keys").mkdir()
    keys = {}
    for name in KEY_SEEDS:
        pem = public_pem(name)
        (folder / "keys" / f"{name}.pub.pem").write_bytes(pem)
        from mechdesign.mechfile import load_public_key, raw_public_bytes

        keys[name] = {"pem": f"keys/{name}.pub.pem",
                      "raw": base64.b64encode(raw_public_bytes(load_public_key(pem))).decode("ascii")}
    manifest = {"format": "mechdesign.conformance", "version": 1, "generated_by": "tools/make_conformance.py",
                "specification": "docs/client_spec.rst",
                "tolerances": {"achieved": ACHIEVED_TOLERANCE},
                "keys": keys, "files": vec.files}
    dump = lambda value: json.dumps(value, indent=1, ensure_ascii=False) + "\n"  # noqa: E731
    (folder / "manifest.json").write_text(dump(manifest), encoding="utf-8")
    (folder / "canonical.json").write_text(dump({"cases": canonical_cases()}), encoding="utf-8")
    names = ["ldp-krr-2", "ldp-krr-16", "ldp-256-outputs", "pml-4", "pml-16", "pml-delta", "renormalised-rows",
             "ldp-constant"]
    (folder / "sampler.json").write_text(dump({"cases": sampler_cases(vec, names)}), encoding="utf-8")
    (folder / "memo.json").write_text(dump(memo_cases(vec)), encoding="utf-8")
    (folder / "environment.json").write_text(json.dumps(environment_cases(), indent=1) + "\n", encoding="ascii")


def main() -> None:
    target = ROOT / "conformance"
    with tempfile.TemporaryDirectory() as tmp:
        fresh = Path(tmp) / "conformance"
        write_vectors(fresh)
        readme = target / "README.md"
        if readme.exists():
            shutil.copyfile(readme, fresh / "README.md")
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(fresh, target)
    files = json.loads((target / "manifest.json").read_text(encoding="utf-8"))["files"]
    print(f"wrote {len(files)} file vectors to {target}")


if __name__ == "__main__":
    main()
