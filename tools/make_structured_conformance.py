"""Conformance vectors of structured (symmetric) mechanism files: ``conformance/structured/``.

Called by ``tools/make_conformance.py`` (one tool writes every vector). Written from the real library:

* ``files/*.json`` and ``manifest.json`` — a valid file (and a memoized one, and one bound to the test key of
  ``memo.json``: ``memoized-keyed``, which any other key must be refused by), and files that must be refused or
  reported: a tampered weight (hash), a count above its cell, counts of the wrong length, a zero count, a
  non-integer count, malformed packed counts, and types that leak more than the ε stated (exit 1, holds false);
  a valid file whose high counts are in the ``rice-1`` code (``rice-valid``, wider cells) and its refusals
  (``rice-*``: an unknown code, a parameter or a centre out of range, a stream that ends early, goes on after its
  last code or has a non-zero padding bit, a unary run above its cell's limit, a count outside its cell);
  each with the expected outcome (``holds``/``overstated`` with ε, achieved and sha256, or ``refused`` with the
  field and the head of the rule).
* ``sampler.json`` — for the valid file, records (input, 64-bit words) and the report the reference rule gives,
  in text and in binary form (hex), including words that are rejected (skipped) and words at the quantised
  boundaries; and byte strings that are not binary reports (``refused_binary``, each with its rule).
* ``memo.json`` — for the memoized file and a test key: (user, value) records, their first word-stream words and
  their reports (text and binary).
"""

from __future__ import annotations

import base64
import hashlib
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "tests") not in sys.path:
    sys.path.insert(0, str(ROOT / "tests"))

from mechdesign import MechanismFileError  # noqa: E402
from mechdesign.deploy.sampling import MemoFunction, SymmetricPrivatizer, user_ids  # noqa: E402
from mechdesign.mechfile import (  # noqa: E402
    binary_widths,
    canonical_bytes,
    key_id,
    pack_counts,
    read_symmetric_file,
    verify_symmetric_file,
    write_symmetric_file,
)

from symmetric_fixtures import SMALL_COUNTS, random_mechanism  # noqa: E402

PROVENANCE = {"mechdesign": "conformance", "numpy": "conformance", "cvxpy": None}
MEMO_KEY = bytes(range(32))  # a test key: never use it for anything
RADIUS = 0.3


def _dump(value: Any) -> str:
    return json.dumps(value, indent=1, ensure_ascii=False) + "\n"


def _rehash(content: dict[str, Any]) -> dict[str, Any]:
    body = {k: v for k, v in content.items() if k != "sha256"}
    body["sha256"] = hashlib.sha256(canonical_bytes(body)).hexdigest()
    return body


def _set_last_bit(text: str) -> str:
    """A packed stream with its last (padding) bit set."""
    data = bytearray(base64.b64decode(text))
    data[-1] |= 1
    return base64.b64encode(bytes(data)).decode("ascii")


def _outcome(path: Path, refusal: Callable[[str], dict[str, Any]]) -> dict[str, Any]:
    try:
        result, _ = verify_symmetric_file(path)
    except MechanismFileError as exc:
        return {"outcome": "refused", **refusal(str(exc))}
    return {"outcome": "holds" if result.holds else "overstated", "epsilon": result.epsilon,
            "achieved": result.achieved, "sha256": result.sha256}


def write_structured(folder: Path, refusal: Callable[[str], dict[str, Any]]) -> None:
    """Write the structured vectors into ``folder`` (created).

    ``refusal`` is make_conformance's reading of a one-line loader error (field and rule), passed in so that the two
    tools do not import each other.
    """
    files = folder / "files"
    files.mkdir(parents=True)
    m = random_mechanism(SMALL_COUNTS, 3, types=8)
    guarantee = {"epsilon": m.capacity(RADIUS), "radius": RADIUS}
    valid = write_symmetric_file(files / "valid.json", m, guarantee=guarantee, provenance=PROVENANCE,
                                 counts_code="packed")
    write_symmetric_file(files / "memoized.json", m, guarantee=guarantee, provenance=PROVENANCE,
                         release={"policy": "memoized"}, counts_code="packed")
    write_symmetric_file(files / "memoized-keyed.json", m, guarantee=guarantee, provenance=PROVENANCE,
                         release={"policy": "memoized", "key": key_id(MEMO_KEY)}, counts_code="packed")
    _rice_files(files)
    content = json.loads(valid.read_text(encoding="utf-8"))
    sizes = read_symmetric_file(valid).mechanism.cells.sizes
    leaky = next(o for o in (random_mechanism(SMALL_COUNTS, seed, types=8) for seed in range(10, 60))
                 if o.capacity(RADIUS) > m.capacity(RADIUS) + 1e-3)
    other = write_symmetric_file(files / "leaky-source.json", leaky, guarantee={"epsilon": leaky.capacity(RADIUS),
                                                                                  "radius": RADIUS},
                                 provenance=PROVENANCE, counts_code="packed")
    leaky_types = json.loads(other.read_text(encoding="utf-8"))["types"]
    other.unlink()
    edits: dict[str, dict[str, Any]] = {
        "count-above-cell": _rehash({**content, "types": {**content["types"], "high_counts": [
            pack_counts(np.array([3, 0, 0, 0, 0, 0]), sizes), *content["types"]["high_counts"][1:]]}}),
        "counts-wrong-length": _rehash({**content, "counts": content["counts"][:-1]}),
        "counts-zero": _rehash({**content, "counts": [0, *content["counts"][1:]]}),
        "counts-not-integer": _rehash({**content, "counts": [9.5, *content["counts"][1:]]}),
        "packed-malformed": _rehash({**content, "types": {**content["types"], "high_counts": [
            "!!!!", *content["types"]["high_counts"][1:]]}}),
        "packed-padding": _rehash({**content, "types": {**content["types"], "high_counts": [
            _set_last_bit(content["types"]["high_counts"][0]), *content["types"]["high_counts"][1:]]}}),
        "leaky-types": _rehash({**content, "types": leaky_types}),
        "tampered-weight": {**content, "types": {**content["types"], "weights": [
            content["types"]["weights"][0] * 1.5, *content["types"]["weights"][1:]]}},
    }
    for name, edited in edits.items():
        (files / f"{name}.json").write_text(json.dumps(edited), encoding="utf-8")
    manifest = {"format": "mechdesign structured conformance", "version": 1,
                "generated_by": "tools/make_structured_conformance.py", "specification": "docs/client_spec.rst",
                "files": [{"name": path.stem, "file": f"files/{path.name}", "expect": _outcome(path, refusal)}
                          for path in sorted(files.glob("*.json"))]}
    (folder / "manifest.json").write_text(_dump(manifest), encoding="utf-8")
    (folder / "sampler.json").write_text(_dump(_sampler_cases(valid)), encoding="utf-8")
    (folder / "memo.json").write_text(_dump(_memo_cases(files / "memoized.json")), encoding="utf-8")


def _bits_text(bits: str) -> str:
    """A bit string (``"0101…"``) zero-padded to whole bytes, in base64."""
    bits += "0" * (-len(bits) % 8)
    return base64.b64encode(int(bits, 2).to_bytes(len(bits) // 8, "big") if bits else b"").decode("ascii")


def _codes(counts: Any, sizes: Any, centres: list[int], rice: list[int]) -> list[str]:
    """Each cell's rice-1 code of one type, as a bit string (the specification's words)."""
    out = []
    for a, s, c, r in zip(counts, sizes, centres, rice, strict=True):
        if r < 0:
            out.append(format(int(a), f"0{int(s).bit_length()}b"))
            continue
        d = int(a) - c
        z = 2 * d if d >= 0 else -2 * d - 1
        out.append("0" * (z >> r) + "1" + (format(z & ((1 << r) - 1), f"0{r}b") if r else ""))
    return out


def _rice_files(files: Path) -> None:
    """``rice-valid`` (the rice-1 code, written by the library) and its ``rice-*`` refusals (edited, re-hashed)."""
    counts = [9] * 2 + [7] * 5 + [5] * 13 + [3] * 31  # cells of 2, 5, 13 and 31 inputs: Rice codes pay
    m = random_mechanism(counts, 4, types=10, low_share=0.0)
    path = write_symmetric_file(files / "rice-valid.json", m, guarantee={"epsilon": m.capacity(RADIUS),
                                                                           "radius": RADIUS},
                                provenance=PROVENANCE, counts_code="rice-1")
    content = json.loads(path.read_text(encoding="utf-8"))
    types = content["types"]
    sizes = read_symmetric_file(path).mechanism.cells.sizes.tolist()
    centres, rice = types["count_centres"], types["count_rice"]
    codes = [_codes(row, sizes, centres, rice) for row in m.high_counts]
    assert [_bits_text("".join(c)) for c in codes] == types["high_counts"]
    k = next(j for j in range(len(sizes) - 1, -1, -1) if rice[j] >= 0)  # the last Rice cell
    z_max = max(2 * (sizes[k] - centres[k]), 2 * centres[k] - 1)
    z_out = next(z for z in range(z_max + 1) if not 0 <= centres[k] + (z // 2 if z % 2 == 0 else -(z + 1) // 2)
                 <= sizes[k])
    r = rice[k]
    outside = "0" * (z_out >> r) + "1" + (format(z_out & ((1 << r) - 1), f"0{r}b") if r else "")
    padded = next(t for t, c in enumerate(codes) if len("".join(c)) % 8)
    streams = {
        "rice-ends-early": _bits_text("".join(codes[0])[:8 * ((len("".join(codes[0])) - 1) // 8)]),  # last byte off
        "rice-trailing-byte": _bits_text("".join(codes[0])),
        "rice-unary-too-long": _bits_text("".join(codes[0][:k]) + "0" * ((z_max >> r) + 1) + "1"
                                          + "".join(codes[0][k + 1:])),
        "rice-count-outside-cell": _bits_text("".join(codes[0][:k]) + outside + "".join(codes[0][k + 1:])),
    }
    trailing = base64.b64decode(streams["rice-trailing-byte"]) + b"\x00"
    streams["rice-trailing-byte"] = base64.b64encode(trailing).decode("ascii")
    streams["rice-padding"] = _set_last_bit(types["high_counts"][padded])
    edits: dict[str, dict[str, Any]] = {
        name: {"high_counts": [text, *types["high_counts"][1:]] if name != "rice-padding" else
               [*types["high_counts"][:padded], text, *types["high_counts"][padded + 1:]]}
        for name, text in streams.items()}
    edits["rice-unknown-code"] = {"counts_code": "rice-2"}
    edits["rice-parameter-range"] = {"count_rice": [9, *rice[1:]]}  # r ≤ 8
    edits["rice-centre-range"] = {"count_centres": [*centres[:k], sizes[k] + 1, *centres[k + 1:]]}
    rules = {"rice-ends-early": "hold a code for every cell", "rice-trailing-byte": "end with its last code",
             "rice-unary-too-long": "have unary runs of at most", "rice-count-outside-cell": "hold counts in [0,",
             "rice-padding": "have zero padding bits", "rice-unknown-code": "be 'rice-1'",
             "rice-parameter-range": "be in [-1, 8]", "rice-centre-range": f"be in [0, {sizes[k]}]"}
    for name, change in edits.items():
        edited = _rehash({**content, "types": {**types, **change}})
        (files / f"{name}.json").write_text(json.dumps(edited), encoding="utf-8")
        try:  # each vector reaches the refusal it is named for (not an earlier one)
            verify_symmetric_file(files / f"{name}.json")
        except MechanismFileError as exc:
            assert rules[name] in str(exc), (name, str(exc))
        else:
            raise AssertionError(f"{name} was not refused")


def _sampler_cases(path: Path) -> dict[str, Any]:
    loaded = read_symmetric_file(path)
    sampler = SymmetricPrivatizer(loaded.mechanism)
    rng = np.random.default_rng(20260)
    width = sampler.words_needed()
    cases = []
    for x in range(loaded.mechanism.cells.size):
        k = int(loaded.mechanism.cells.cell_of[x])
        quants = sampler.quantised[k][1]
        bounds = np.cumsum(np.array(quants, dtype=object))[:-1].tolist()
        firsts = [0, 2**64 - 1, *[int(b) for b in bounds[:3]], *[int(b) - 1 for b in bounds[:3]],
                  *[int(w) for w in rng.integers(0, 2**64 - 1, 3, dtype=np.uint64, endpoint=True)]]
        for i, first in enumerate(firsts):
            words = [first, *[int(w) for w in rng.integers(0, 2**64 - 1, width, dtype=np.uint64, endpoint=True)]]
            if i == 1:
                words[1] = 2**64 - 1  # rejected whenever the first group's radix is not a power of two
            types, groups = sampler.sample_words([x], np.array([words], dtype=np.uint64))
            cases.append({"input": loaded.mechanism.inputs[x], "words": [str(w) for w in words],
                          "report": sampler.texts(types, groups)[0], "binary": _binary(sampler, types, groups)})
    return {"file": "files/valid.json", "words_needed": width, "sampled_epsilon": sampler.sampled_capacity(RADIUS),
            "cases": cases, "refused_binary": _refused_binary(sampler.family)}


def _binary(sampler: SymmetricPrivatizer, types: np.ndarray, groups: np.ndarray) -> str:
    """The binary form of one report (t in B_T bytes, then V in B_t bytes, big-endian), in hex."""
    t = int(types[0])
    return sampler.family.binary(t, sampler.family.value(t, groups[0])).hex()


def _refused_binary(family: Any) -> list[dict[str, str]]:
    """Byte strings that are not binary reports of the family, each with the rule a reader names."""
    t = max(range(family.types), key=family.seed_count)
    top = family.binary(t, family.seed_count(t) - 1)
    head = binary_widths(family)[0]
    above = family.binary(t, 0)[:head] + family.seed_count(t).to_bytes(len(top) - head, "big") \
        if family.seed_count(t) < 256 ** (len(top) - head) else None
    cases = [{"binary": "", "rule": f"hold a type in {head} bytes", "why": "empty"},
             {"binary": family.types.to_bytes(head, "big").hex() + "00", "rule": f"name a type below {family.types}",
              "why": "the type T"},
             {"binary": (top + b"\x00").hex(), "rule": "bytes of type and its type's bytes of seed",
              "why": "one byte too many"},
             {"binary": top[:-1].hex(), "rule": "bytes of type and its type's bytes of seed", "why": "one byte short"}]
    if above is not None:
        cases.append({"binary": above.hex(), "rule": f"hold a seed below |S_t| = {family.seed_count(t)}",
                      "why": "V = |S_t|"})
    return cases


def _memo_cases(path: Path) -> dict[str, Any]:
    loaded = read_symmetric_file(path)
    sampler = SymmetricPrivatizer(loaded.mechanism)
    memo = MemoFunction(MEMO_KEY, loaded.sha256)
    users = ["ann", "bo", "a user id of more than one block", "42"]
    values = [0, 5, 11, 15]
    ids = user_ids(users)
    words = memo.word_stream(0, ids, np.array(values), 4)
    types, groups = sampler.sample_memoized(np.array(values), ids, memo)
    texts = sampler.texts(types, groups)
    return {"file": "files/memoized.json", "key": MEMO_KEY.hex(), "cases": [
        {"user": user, "input": loaded.mechanism.inputs[x], "words": [str(int(w)) for w in row], "report": text,
         "binary": _binary(sampler, types[r:r + 1], groups[r:r + 1])}
        for r, (user, x, row, text) in enumerate(zip(users, values, words, texts, strict=True))]}
