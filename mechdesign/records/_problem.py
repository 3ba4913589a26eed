"""Record problem files: TOML descriptions of a whole-record design (``columns`` beside ``source``).

Form (``[design]``, ``[expected]`` and ``[provenance]`` optional; every key in :data:`KEYS`; ``data.samples``, the
former name of ``data.source``, is read with a deprecation warning)::

    name = "adult-race-sex-product"
    [data]
    source = "adult"                  # the vendored UCI Adult records, or a CSV path relative to the file
    columns = ["race", "sex"]         # the record's attributes, in order (distinct)
    max_letters = 1000000             # optional limit on the joint alphabet N = ∏ N_i
    [privacy]
    epsilon = 1.0                     # the record-level budget (nats)
    delta = 1e-6                      # or radius = 0.05; β*(δ, m, N) of [E] eq. 37 on the joint alphabet
    [design]
    kind = "product"                  # or "joint" (one mechanism over the product alphabet), or "sampled"
                                      # (each record reports one attribute, with the whole budget)
    factor = "estimation"             # product factors: "estimation" (A-optimal) or "randomized_response"
    weights = "optimise"              # optional: relative budgets, or "optimise"
    objective = "marginals"           # joint designs: "marginals" (L-optimal), "joint" (A-optimal) or "mi"
    probabilities = "optimise"        # sampled designs: π_i ∝ √(tr J_i⁻¹ − ‖f_i‖²), "uniform", or [π_1, …]

The prior is the joint empirical distribution of the records (:class:`~mechdesign.core.JointPrior`).
Every malformed file — an unknown or repeated column, a missing value, a joint alphabet over the limit — is one
``ValueError`` line naming the file and the field.
"""

from __future__ import annotations

import math
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mechdesign.core._record_prior import MAX_JOINT_SIZE, JointPrior

__all__ = ["JOINT_LIMIT", "JOINT_OBJECTIVES", "KEYS", "RECORD_DESIGNS", "RecordProblem", "is_record_problem",
           "load_record_problem", "problem_keys"]

#: Default limit on the joint alphabet of a joint design (a dense N × M matrix is designed and stored).
JOINT_LIMIT = 1000
#: The keys of a record problem file that differ from a single column's
#: (:data:`mechdesign.design.KEYS`), by table: the parser accepts these and no others.
KEYS: dict[str, dict[str, str]] = {
    "": {"name": "as for one column", "description": "free text", "data": "table: the records",
         "privacy": "table: the record-level budget and ball", "design": "table: which record design",
         "expected": "table: values the catalogue's tests check", "provenance": "table: free form"},
    "data": {
        "source": '"adult" (the vendored UCI Adult records) or a CSV path relative to the problem file',
        "columns": "the record's attributes, in order (distinct column names): a record problem has this key",
        "max_letters": "a limit on the joint alphabet N = ∏ N_i (default 1,000 for a joint design)",
        "samples": "deprecated name of source (read with a warning)",
    },
    "privacy": {"epsilon": "the record-level budget in nats",
                "delta": "δ: β*(δ, m, N) of [E] eq. 37 on the joint alphabet (exactly one of delta, radius)",
                "radius": "β on the joint alphabet (exactly one of delta, radius)"},
    "design": {
        "kind": '"product" (default: one mechanism per attribute), "joint" (one over the product alphabet) or '
                '"sampled" (each record reports one attribute, with the whole budget)',
        "factor": 'product designs: "estimation" (A-optimal factors, default) or "randomized_response"',
        "weights": 'product designs: the attributes\' relative budgets, or "optimise"',
        "objective": 'joint designs: "marginals" (L-optimal, default), "joint" (A-optimal) or "mi"',
        "probabilities": 'sampled designs: "optimise" (default), "uniform" or one positive number per column',
    },
    "expected": {"*": "any key: e.g. utility and tolerance, checked by tests/design/test_problems_catalogue.py"},
    "provenance": {"*": "any key: e.g. source (where the data come from) and objective"},
}
_TOP = set(KEYS[""])
_DATA = set(KEYS["data"])


def problem_keys() -> list[tuple[str, str, str]]:
    """Every key of a problem file as (key, which files, meaning): the documentation's reference table.

    Generated from the parsers' own tables (:data:`mechdesign.design.KEYS` for one column, :data:`KEYS`
    for whole records), which are also what they accept: a key missing here is refused by both. A key both kinds
    share with one meaning is one row ("both"); with two meanings, one row each.

    Returns
    -------
    list of tuple of str
        ``("data.source", "one column", "...")``, ...; tables as ``[data]``, top-level keys bare.

    Examples
    --------
    >>> ("release.releases", "one column") in [(key, files) for key, files, _ in problem_keys()]
    True
    """
    from mechdesign.design._problemfile import KEYS as COLUMN

    rows: list[tuple[str, str, str]] = []
    for table in dict.fromkeys([*COLUMN, *KEYS]):
        column, record = COLUMN.get(table, {}), KEYS.get(table, {})
        for key in dict.fromkeys([*column, *record]):
            name = (f"[{key}]" if key in ("data", "privacy", "utility", "release", "expected", "provenance", "design")
                    else key) if table == "" else f"{table}.{key}"
            if key in column and key in record and (table == "" or column[key] == record[key]
                                                    or key in ("epsilon", "samples")):
                rows.append((name, "both", column[key]))
                continue
            if key in column:
                rows.append((name, "one column", column[key]))
            if key in record:
                rows.append((name, "records", record[key]))
    return rows
_PRIVACY = set(KEYS["privacy"])
_DESIGN = set(KEYS["design"])
#: The record designs a problem file can ask for.
RECORD_DESIGNS = ("product", "joint", "sampled")
#: What a joint design optimises (the names of mechdesign.records.OBJECTIVES, kept here so that
#: reading a problem file imports no engine).
JOINT_OBJECTIVES = ("marginals", "joint", "mi")


@dataclass(frozen=True, eq=False)
class RecordProblem:
    """A loaded record problem file.

    Parameters
    ----------
    path : pathlib.Path
        Where it was read from.
    name : str
        The problem's name (the record file is ``<name>.mech.json``).
    prior : JointPrior
        The joint estimate P̂ of the records.
    epsilon : float
        The record-level budget ε.
    delta, radius : float or None
        Exactly one is given ([E] eq. 37 gives β from δ on the joint alphabet).
    kind : {"product", "joint", "sampled"}
        The design.
    factor : str
        The product factors' kind.
    weights : list of float, str or None
        Relative budgets of the factors.
    description : str
        The file's description.
    expected, provenance : dict
        The ``[expected]`` and ``[provenance]`` tables.
    objective : {"marginals", "joint", "mi"}
        What a joint design optimises.
    probabilities : str or list of float
        The sampling probabilities of a sampled design: "optimise", "uniform" or one positive number per
        attribute (normalised to sum one by the design).
    """

    path: Path
    name: str
    prior: JointPrior
    epsilon: float
    delta: float | None
    radius: float | None
    kind: str
    factor: str
    weights: Any
    description: str = ""
    expected: dict[str, Any] = field(default_factory=dict)
    provenance: dict[str, Any] = field(default_factory=dict)
    objective: str = "marginals"
    probabilities: Any = "optimise"


def _read(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"problem file {path.name}: not valid TOML ({exc})") from None
    except UnicodeDecodeError:
        raise ValueError(f"problem file {path.name}: not UTF-8 text") from None


def is_record_problem(path: str | os.PathLike[str]) -> bool:
    """Whether a problem file describes whole records (``columns`` in ``[data]``); unreadable files say no.

    Parameters
    ----------
    path : str or os.PathLike
        A problem file.

    Returns
    -------
    bool
        True when its ``[data]`` table has ``columns``.
    """
    try:
        doc = _read(Path(path))
    except (ValueError, OSError):
        return False
    return isinstance(doc.get("data"), dict) and "columns" in doc["data"]


def load_record_problem(path: str | os.PathLike[str]) -> RecordProblem:
    """Read and validate a record problem file (module docstring for the form).

    Parameters
    ----------
    path : str or os.PathLike
        A TOML file.

    Returns
    -------
    RecordProblem
        The joint prior (m records, β*(δ, m, N) of [E] eq. 37 on the joint alphabet), budget and design.

    Raises
    ------
    ValueError
        One line ``problem file <name>: <field> must <rule>, got …``: unknown keys, an unknown or repeated
        column, an empty value (a missing one: named as the single-attribute loader names it), a joint alphabet
        over ``max_letters``, invalid numbers or kinds.
    FileNotFoundError
        If ``path`` does not exist.
    """
    file = Path(path)
    doc = _read(file)

    def fail(where: str, rule: str, value: Any) -> ValueError:
        shown = repr(value)
        return ValueError(f"problem file {file.name}: {where} must {rule}, got {where}="
                          f"{shown if len(shown) <= 80 else shown[:77] + '...'}")

    def table(key: str, allowed: set[str], required: bool = True) -> dict[str, Any]:
        value = doc.get(key, None if required else {})
        if not isinstance(value, dict):
            raise fail(f"[{key}]", "be a TOML table", value)
        if set(value) - allowed:
            raise fail(f"[{key}]", f"only have keys {sorted(allowed)}", sorted(set(value) - allowed))
        return value

    if set(doc) - _TOP:
        raise fail("the file", f"only have top-level keys {sorted(_TOP)}", sorted(set(doc) - _TOP))
    name = doc.get("name", file.stem)
    if not isinstance(name, str) or not name or "/" in name or "\\" in name or name in (".", ".."):
        raise fail("name", "be a plain file stem", name)
    data, privacy, design = table("data", _DATA), table("privacy", _PRIVACY), table("design", _DESIGN, False)
    kind = design.get("kind", "product")
    if kind not in RECORD_DESIGNS:
        raise fail("design.kind", "be 'product', 'joint' or 'sampled'", kind)
    factor = design.get("factor", "estimation")
    objective = design.get("objective", "marginals")
    if objective not in JOINT_OBJECTIVES:
        raise fail("design.objective", f"be one of {list(JOINT_OBJECTIVES)}", objective)
    columns = data.get("columns")
    if not isinstance(columns, list) or not columns or not all(isinstance(c, str) for c in columns):
        raise fail("data.columns", "be a non-empty list of column names", columns)
    probabilities = design.get("probabilities", "optimise")
    if "probabilities" in design and kind != "sampled":
        raise fail("design.probabilities", "be given only with kind = 'sampled'", probabilities)
    if not (probabilities in ("optimise", "uniform") or (
            isinstance(probabilities, list) and len(probabilities) == len(columns) and all(
                isinstance(p, (int, float)) and not isinstance(p, bool) and math.isfinite(p) and p > 0
                for p in probabilities))):
        raise fail("design.probabilities", f"be 'optimise', 'uniform' or {len(columns)} positive numbers (one per "
                   "column)", probabilities)
    limit = data.get("max_letters", JOINT_LIMIT if kind == "joint" else MAX_JOINT_SIZE)  # sampled: marginals only
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise fail("data.max_letters", "be a positive integer", limit)
    epsilon = privacy.get("epsilon")
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) or not math.isfinite(epsilon):
        raise fail("privacy.epsilon", "be a finite number", epsilon)
    if ("radius" in privacy) == ("delta" in privacy):
        raise fail("[privacy]", "give exactly one of radius, delta", sorted(privacy))
    from mechdesign.design._problemfile import deprecated_source, warn_deprecated

    data, deprecated = deprecated_source(file, data)
    try:
        prior = _prior(file, data.get("source"), columns, limit)
    except (ValueError, TypeError) as exc:
        message = str(exc).splitlines()[0]
        raise ValueError(message if message.startswith("problem file") else
                         f"problem file {file.name}: {message}") from None
    description = doc.get("description", "")
    if not isinstance(description, str):
        raise fail("description", "be a string", description)
    extra = {key: doc.get(key, {}) for key in ("expected", "provenance")}
    for key, value in extra.items():
        if not isinstance(value, dict):
            raise fail(f"[{key}]", "be a TOML table", value)
    loaded = RecordProblem(file, name, prior, float(epsilon), privacy.get("delta"), privacy.get("radius"), kind,
                           str(factor), design.get("weights"), description, dict(extra["expected"]),
                           dict(extra["provenance"]), str(objective), probabilities)
    warn_deprecated(deprecated)
    return loaded


def _prior(file: Path, source: Any, columns: list[str], limit: int) -> JointPrior:
    """The joint prior of ``columns`` of the vendored Adult data or of a CSV file (empty fields refused)."""
    if source == "adult":
        return JointPrior.from_adult(columns, max_size=limit)
    if not isinstance(source, str) or source.startswith("adult"):
        raise ValueError(f"problem file {file.name}: data.source must be 'adult' or a CSV path (relative to the "
                         f"problem file), got data.source={source!r}")
    import pandas as pd

    from mechdesign._files import CSV_NAME_RULE, csv_compression
    from mechdesign.core._record_codes import distinct_names
    from mechdesign.design._problemfile import no_empty

    csv = (file.parent / source).resolve()
    try:  # .csv.zst or .csv.zip: one line here, not pandas' traceback
        csv_compression(csv, "data.source")
    except ValueError:
        raise ValueError(f"problem file {file.name}: data.source must {CSV_NAME_RULE}, got "
                         f"data.source={source!r}") from None
    if not csv.is_file():
        raise ValueError(f"problem file {file.name}: data.source must be an existing CSV file (relative to the "
                         f"problem file), got data.source={source!r}")
    wanted = distinct_names(columns)
    header = list(pd.read_csv(csv, nrows=0).columns)
    absent = [c for c in wanted if c not in header]
    if absent:
        raise ValueError(f"problem file {file.name}: data.columns must name columns of {source} {header[:12]}, got "
                         f"data.columns={absent}")
    # Every field as its text, as the single-attribute loader and privatize read it ('NA' is a category, not pandas'
    # missing value); an empty field is refused in their words.
    frame = pd.read_csv(csv, usecols=wanted, dtype=str, keep_default_na=False)
    for column in wanted:
        no_empty(file, "data.source", frame[column], f"{source}, column {column!r}")
    return JointPrior.from_frame(frame, wanted, max_size=limit)
