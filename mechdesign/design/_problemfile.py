"""Problem files: TOML descriptions of design problems with expected values and provenance (``problems/``).

Form (``[expected]`` and ``[provenance]`` optional; every key with its meaning is in :data:`KEYS`, from which the
documentation's "Problem files" page is generated)::

    name = "adult-race"
    description = "..."
    [data]
    counts = [41762, 4685, 1519, 470, 406]      # or: probabilities = [...]
    labels = ["White", "Black", ...]             # optional
    # or: counts = "data/zipf-100000.csv.gz"  (a count table: a 'count' column and optionally a 'label' column,
    #     one row per category; .csv, .csv.gz, .csv.bz2 or .csv.xz, path relative to the TOML file)
    # or: source = "adult:education"  (vendored Adult column)
    #     source = "records.csv"  with  column = "race"  (path relative to the TOML file)
    [privacy]
    epsilon = 1.0
    radius = 0.02            # or: delta = 1e-6 (radius from [E] eq. 37, m = number of records)
    [utility]
    kind = "mutual_information"                  # hypothesis_testing also needs null = [...], alternative = [...]
    # kind = "estimation_linear" needs exactly one of: marginals = [5, 2] (attribute sizes of a product
    # alphabet, labels "a|b"), subset = [...] or groups = [[...], ...] (category labels or indices),
    # weights = [[...], ...] (the rows of L); names = [...] optionally names the quantities
    [expected]
    utility = 0.16243054      # optimal utility, checked by tests/test_problems_catalogue.py
    tolerance = 1e-8
    [provenance]
    source = "..."

Every malformed file gives one ``ValueError`` line naming the file and the field. ``data.samples``, the former name
of ``data.source``, is still read, with a deprecation warning (:data:`DEPRECATED`): "samples" is a count
everywhere else (``privacy.samples``, ``--samples``, the glossary).
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import math
import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from mechdesign.core._prior import Prior
from mechdesign.core._quantities import group_map, marginal_map, marginal_names, subset_map
from mechdesign.design._problem import DesignProblem
from mechdesign.design._utility import UTILITY_KINDS, Utility

__all__ = ["COUNT_TABLE_BYTES", "COUNT_TABLE_ROWS", "DEPRECATED", "KEYS", "ProblemFile", "load_problem"]

#: Every key of a problem file, by table ("" for the top level), with what it means: the parser accepts these and
#: no others, and the documentation's reference page is generated from this table. "*" stands for any key.
KEYS: dict[str, dict[str, str]] = {
    "": {
        "name": "the design's name: the file written is <name>.mech.json (a plain file stem; default: the file's)",
        "description": "free text",
        "data": "table: the data the design is for",
        "privacy": "table: the budget and the uncertainty ball",
        "utility": "table: what the design optimises (required: estimation_mse to decode category frequencies)",
        "release": "table: how often a person's value may be privatized (default: one release per run)",
        "expected": "table: values the catalogue's tests check (problems/)",
        "provenance": "table: where the data and the values come from (free form)",
    },
    "data": {
        "source": 'where the records are: "adult:<column>" (a column of the vendored UCI Adult data) or a CSV '
                  "path (.csv, .csv.gz, .csv.bz2, .csv.xz) relative to the problem file, with column",
        "column": "the CSV column holding the attribute (with source = a CSV path)",
        "counts": "category counts instead of records: a list of numbers, or a count table's path (.csv, .csv.gz, "
                  ".csv.bz2, .csv.xz: a 'count' column, optionally a 'label' column) relative to the problem file "
                  "(m = their sum; a table holds at most 10⁶ rows and 64 MiB of text)",
        "probabilities": "a probability vector instead of records (give privacy.samples with privacy.delta)",
        "labels": "category names, in the order of counts or probabilities (records give them)",
        "samples": "deprecated name of source (read with a warning)",
    },
    "privacy": {
        "epsilon": "ε, the PML budget in nats",
        "delta": "δ: the radius is β*(δ, m, N) of [E] eq. 37 (exactly one of delta, radius)",
        "radius": "β, the ℓ1 radius of the ball in [0, 2] (exactly one of delta, radius)",
        "samples": "m, the number of records behind data.probabilities (a count; data.counts and records give it)",
    },
    "utility": {
        "kind": "mutual_information, estimation_mse, estimation_logdet, estimation_linear, hypothesis_testing, or "
                "another sub-convex utility (mechdesign.UTILITY_KINDS)",
        "marginals": "estimation_linear: attribute sizes of a product alphabet, e.g. [5, 2] (exactly one of "
                     "marginals, subset, groups, weights)",
        "subset": "estimation_linear: the categories of interest (labels or indices)",
        "groups": "estimation_linear: disjoint lists of categories whose sums are decoded",
        "weights": "estimation_linear: the rows of L, N numbers each",
        "names": "estimation_linear: names of the decoded quantities (optional)",
        "null": "hypothesis_testing: the null prior",
        "alternative": "hypothesis_testing: the alternative prior",
    },
    "release": {
        "policy": '"single" (default: each privatize run is one more release), "repeated" (the file states '
                  'the account of releases fresh releases), "memoized" (one output per user and value, however '
                  'often reported) or "two-layer" (memoized W₁, fresh W₂ per report)',
        "releases": 'T, with policy = "repeated": the file states ε_T, the leakage of T fresh releases of one value',
        "report_epsilon": 'with policy = "two-layer": the per-report budget in (0, privacy.epsilon]; '
                          "privacy.epsilon is then the lifetime budget (estimation_mse only)",
        "link_epsilon": 'with policy = "two-layer": the linkability budget, the LDP level of W₂ on W₁\'s outputs '
                        "(what one report tells apart of two permanent outputs; default: unbounded)",
    },
    "expected": {"*": "any key: e.g. utility and tolerance, checked by tests/design/test_problems_catalogue.py"},
    "provenance": {"*": "any key: e.g. source (where the data come from) and objective"},
}
#: Deprecated keys still read, by table: the key that replaces each.
DEPRECATED: dict[str, dict[str, str]] = {"data": {"samples": "source"}}

_TOP = set(KEYS[""])
_RELEASE = set(KEYS["release"])
_DATA = set(KEYS["data"])
_PRIVACY = set(KEYS["privacy"])
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,200}")


@dataclass(frozen=True, eq=False)
class ProblemFile:
    """A loaded problem file: the :class:`DesignProblem`, its ``[expected]`` and ``[provenance]`` tables.

    Parameters
    ----------
    path : pathlib.Path
        Where the file was read from.
    problem : DesignProblem
        The validated problem.
    description : str
        The file's ``description`` (empty if absent).
    expected : dict
        The ``[expected]`` table (e.g. ``utility`` and ``tolerance``), checked by the catalogue tests.
    provenance : dict
        The ``[provenance]`` table (source of the data and values).
    release : dict
        The ``[release]`` table: how the written file may be used (``policy`` "single", "repeated" with
        ``releases``, "memoized", or "two-layer" with ``report_epsilon``, the per-report budget, ``privacy.epsilon``
        being the lifetime one, and optionally ``link_epsilon``, the linkability budget: the LDP level of the
        reports on the permanent outputs, :mod:`mechdesign.core._linkability`); empty for one release per run.
    """

    path: Path
    problem: DesignProblem
    description: str = ""
    expected: dict[str, Any] = field(default_factory=dict)
    provenance: dict[str, Any] = field(default_factory=dict)
    release: dict[str, Any] = field(default_factory=dict)


class _Reader:
    def __init__(self, path: Path) -> None:
        self.path = path

    def fail(self, where: str, rule: str, value: Any) -> ValueError:
        shown = repr(value)
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        return ValueError(f"problem file {self.path.name}: {where} must {rule}, got {where}={shown}")

    def table(self, doc: dict[str, Any], key: str, allowed: set[str] | None, required: bool = True) -> dict[str, Any]:
        value = doc.get(key)
        if value is None and not required:
            return {}
        if not isinstance(value, dict):
            raise self.fail(f"[{key}]", "be a TOML table", value)
        if allowed is not None and set(value) - allowed:
            raise self.fail(f"[{key}]", f"only have keys {sorted(allowed)}", sorted(set(value) - allowed))
        return value

    def number(self, table: dict[str, Any], where: str, key: str) -> float:
        value = table[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise self.fail(f"{where}.{key}", "be a finite number", value)
        return float(value)


def deprecated_source(path: Path, data: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    """``[data]`` with its deprecated ``samples`` (a data source) read as ``source``, and the warning to give.

    Both given is refused (one line): which one is meant cannot be guessed. The loader gives the warning (a
    FutureWarning) only once the whole file is read: a file it refuses gets its one-line error alone.
    """
    if "samples" not in data:
        return data, None
    if "source" in data:
        raise ValueError(f"problem file {path.name}: [data] must give source only (samples is its deprecated name), "
                         f"got [data]={sorted(data)}")
    warning = (f"problem file {path.name}: data.samples is deprecated and will be removed after 0.2; use data.source "
               "(samples means a count everywhere else)")
    return {("source" if key == "samples" else key): value for key, value in data.items()}, warning


def warn_deprecated(warning: str | None) -> None:
    """Give a loader's deprecation warning (:func:`deprecated_source`), pointed at the loader's caller."""
    if warning is not None:
        import warnings

        warnings.warn(warning, FutureWarning, stacklevel=3)


def _prior(reader: _Reader, data: dict[str, Any]) -> Prior:
    sources = [k for k in ("counts", "probabilities", "source") if k in data]
    if len(sources) != 1:
        raise reader.fail("[data]", "have exactly one of counts, probabilities, source", sources)
    labels = data.get("labels")
    if labels is not None and (not isinstance(labels, list) or not all(isinstance(x, str) for x in labels)):
        raise reader.fail("data.labels", "be a list of strings", labels)
    if "source" in data:
        return _records_prior(reader, data["source"], data.get("column"), labels)
    key = sources[0]
    values = data[key]
    if key == "counts" and isinstance(values, str):
        return _counts_file(reader, values, labels)
    if not isinstance(values, list) or not all(isinstance(x, (int, float)) and not isinstance(x, bool)
                                               for x in values):
        raise reader.fail(f"data.{key}", "be a list of numbers", values)
    if key == "counts":
        return Prior.from_counts(values, labels)
    return Prior.from_probabilities(values, labels)


def _records_prior(reader: _Reader, source: Any, column: Any, labels: list[str] | None) -> Prior:
    if not isinstance(source, str):
        raise reader.fail("data.source", "be 'adult:<column>' or a CSV path", source)
    if column is not None and not isinstance(column, str):  # never design for one column of several silently
        raise reader.fail("data.column", "name one column (one column per file today)", column)
    if source.startswith("adult:"):
        if column is not None and column != source.split(":", 1)[1]:
            raise reader.fail("data.column", f"be omitted or equal the column of source = {source!r}", column)
        from mechdesign._datasets import adult_counts

        names, counts = adult_counts(source.split(":", 1)[1])
        return Prior.from_counts(counts, names)
    if not isinstance(column, str):
        raise reader.fail("data.column", "name the CSV column holding the attribute", column)
    import pandas as pd

    from mechdesign._files import CSV_NAME_RULE, csv_compression

    csv = (reader.path.parent / source).resolve()
    try:  # .csv.zst or .csv.zip: one line here, not pandas' traceback
        csv_compression(csv, "data.source")
    except ValueError:
        raise reader.fail("data.source", CSV_NAME_RULE, source) from None
    if not csv.is_file():
        raise reader.fail("data.source", "be an existing CSV file (relative to the problem file)", source)
    frame = pd.read_csv(csv, usecols=[column], dtype=str, keep_default_na=False)
    no_empty(reader.path, "data.source", frame[column], f"{source}, column {column!r}")
    return Prior.from_samples(frame[column], labels)


def no_empty(path: Path, where: str, values: Any, what: str) -> None:
    """Refuse an empty category value, as privatize does: an empty CSV field is a missing value, not a category.

    Designed for, it became a category ``''`` without a word (issue 61); a category meant for missing values is
    named (e.g. ``missing``) in the data. The record problem loader (:mod:`mechdesign.records._problem`) refuses
    alike. ``path``: the problem file; ``values``: the column as read, every field a string.
    """
    empty = np.flatnonzero(np.asarray(values, dtype=object) == "")
    if empty.size:
        raise _Reader(path).fail(where, "hold no empty value '' (a missing value: name a category for it, e.g. "
                                 "'missing')", f"{what}: {empty.size:,} empty, the first in row {empty[0] + 1:,}")


_COUNTS_COLUMNS = {"count", "label"}
_INTEGER = re.compile(r"[0-9]+")
#: The most categories (rows) a count table holds: ten times the catalogue's largest alphabets (10⁵, english-100000
#: and zipf-100000); a design of 10⁷ categories could not be written within the 64 MiB its readers accept. A table
#: of 10⁹ rows was read whole (7.7 GB) before the time limit began to count (issue 61).
COUNT_TABLE_ROWS = 10**6
#: The most bytes of text (after decompression) read from a count table: 10⁶ rows of labels up to ~60 characters.
COUNT_TABLE_BYTES = 64 << 20


def _counts_file(reader: _Reader, source: str, labels: list[str] | None) -> Prior:
    """A count table named by ``counts = "<path>"``: one row per category, a ``count`` column, optional ``label``.

    Large alphabets (10⁴–10⁵ categories) keep their counts beside the problem file instead of in a TOML array. Counts
    are plain decimal integers (no signs, decimals or exponents: a count table read differently by another reader
    would be another prior); labels are read as text, as written.
    """
    import pandas as pd

    from mechdesign._files import CSV_NAME_RULE, csv_compression

    try:
        compression = csv_compression(source, "data.counts")
    except ValueError:
        raise reader.fail("data.counts", f"be a list of numbers or a CSV path that must {CSV_NAME_RULE}",
                          source) from None
    path = (reader.path.parent / source).resolve()
    if not path.is_file():
        raise reader.fail("data.counts", "be an existing CSV file (relative to the problem file)", source)
    bound = (f"have at most {COUNT_TABLE_ROWS:,} rows (categories) and {COUNT_TABLE_BYTES >> 20} MiB of text "
             "(decompressed)")
    opener: Any = {None: open, "gzip": gzip.open, "bz2": bz2.open, "xz": lzma.open}[compression]
    try:  # bounded before parsing: a compressed table's size on disk says nothing of its rows
        with opener(path, "rb") as handle:
            text = handle.read(COUNT_TABLE_BYTES + 1)
        if len(text) > COUNT_TABLE_BYTES:
            raise reader.fail("data.counts", bound, f"{source} (more than {COUNT_TABLE_BYTES:,} bytes)")
        table = pd.read_csv(io.BytesIO(text), dtype=str, keep_default_na=False, nrows=COUNT_TABLE_ROWS + 1)
    except (ValueError, OSError, EOFError, UnicodeDecodeError, lzma.LZMAError) as exc:  # corrupt compression, bad
        if str(exc).startswith("problem file"):                                          # quoting, no header
            raise
        raise reader.fail("data.counts", "be a readable CSV file with a header row",
                          f"{source} ({type(exc).__name__})") from None
    if len(table) > COUNT_TABLE_ROWS:
        raise reader.fail("data.counts", bound, f"{source} (more than {COUNT_TABLE_ROWS:,} rows)")
    columns = set(map(str, table.columns))
    if "count" not in columns or columns - _COUNTS_COLUMNS:
        raise reader.fail("data.counts", "have a 'count' column and at most a 'label' column besides",
                          sorted(columns))
    if table.empty:
        raise reader.fail("data.counts", "have at least one row", source)
    raw = table["count"].tolist()
    bad = next((x for x in raw if not _INTEGER.fullmatch(x)), None)
    if bad is not None:
        raise reader.fail("data.counts", f"hold non-negative decimal integers in column 'count' ({source})", bad)
    if "label" in columns:
        if labels is not None:
            raise reader.fail("data.labels", f"be omitted when the count table {source} has a 'label' column",
                              labels)
        labels = table["label"].tolist()
        no_empty(reader.path, "data.counts", labels, f"{source}, column 'label'")
    return Prior.from_counts(np.array([int(x) for x in raw], dtype=np.int64), labels)


_LINEAR = ("marginals", "subset", "groups", "weights")
_KINDS = [k for k in UTILITY_KINDS if k != "custom"]  # a custom utility is code, not a file's


def _categories(reader: _Reader, where: str, values: Any, prior: Prior) -> list[int]:
    """Category indices from a non-empty list of labels or indices (distinct)."""
    rule = f"be a non-empty list of distinct category labels or indices in 0..{prior.size - 1}"
    if not isinstance(values, list) or not values:
        raise reader.fail(where, rule, values)
    out = []
    for x in values:
        if isinstance(x, str) and x in prior.labels:
            out.append(prior.labels.index(x))
        elif isinstance(x, int) and not isinstance(x, bool) and 0 <= x < prior.size:
            out.append(x)
        else:
            raise reader.fail(where, rule, values)
    if len(set(out)) != len(out):
        raise reader.fail(where, rule, values)
    return out


def _linear(reader: _Reader, table: dict[str, Any], prior: Prior) -> Utility:
    """``estimation_linear``: L from exactly one of marginals, subset, groups, weights; optional names."""
    given = [k for k in _LINEAR if k in table]
    if set(table) - {"kind", "names", *_LINEAR} or len(given) != 1:
        raise reader.fail("[utility]", f"have kind, exactly one of {list(_LINEAR)} and optionally names",
                          sorted(table))
    key, value = given[0], table[given[0]]
    n, labels = prior.size, prior.labels
    if key == "marginals":
        if (not isinstance(value, list) or not value
                or not all(isinstance(x, int) and not isinstance(x, bool) and x >= 2 for x in value)
                or math.prod(value) != n):
            raise reader.fail("utility.marginals", f"list attribute sizes (integers ≥ 2) whose product is the "
                              f"number of categories {n}", value)
        weights, names = marginal_map(value), list(marginal_names(value, labels))
    elif key == "subset":
        chosen = _categories(reader, "utility.subset", value, prior)
        weights, names = subset_map(chosen, n), [labels[x] for x in chosen]
    elif key == "groups":
        if not isinstance(value, list) or not value:
            raise reader.fail("utility.groups", "be a non-empty list of lists of categories", value)
        groups = [_categories(reader, "utility.groups", g, prior) for g in value]
        if len({x for g in groups for x in g}) != sum(len(g) for g in groups):
            raise reader.fail("utility.groups", "be disjoint", value)
        weights, names = group_map(groups, n), ["+".join(labels[x] for x in g) for g in groups]
    else:
        if (not isinstance(value, list) or not value or not all(isinstance(row, list) and len(row) == n and all(
                isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in row)
                for row in value)):
            raise reader.fail("utility.weights", f"be a non-empty list of rows of {n} finite numbers (one per "
                              "category)", value)
        weights, names = np.asarray(value, dtype=np.float64), [f"q{i}" for i in range(len(value))]
    if "names" in table:
        names = table["names"]
        if (not isinstance(names, list) or len(names) != len(weights) or len(set(map(str, names))) != len(names)
                or not all(isinstance(x, str) for x in names)):
            raise reader.fail("utility.names", f"be {len(weights)} distinct strings (one per quantity)", names)
    return Utility.estimation_linear(weights, names)


def _utility(reader: _Reader, table: dict[str, Any], prior: Prior) -> Utility:
    kind = table.get("kind")
    if kind not in _KINDS:
        raise reader.fail("utility.kind", f"be one of {_KINDS}", kind)
    if kind == "estimation_linear":
        return _linear(reader, table, prior)
    if kind == "hypothesis_testing":
        if "null" not in table or "alternative" not in table:
            raise reader.fail("[utility]", "give null and alternative priors for hypothesis_testing", sorted(table))
        return Utility.hypothesis_testing(table["null"], table["alternative"])
    if set(table) != {"kind"}:
        raise reader.fail("[utility]", "only have the key kind", sorted(table))
    return Utility(kind)


def load_problem(path: str | os.PathLike[str]) -> ProblemFile:
    r"""Read and validate a problem file (see the module docstring for the form).

    A ``delta`` in ``[privacy]`` gives the radius β*(δ) of [E] eq. 37 with m the number of records
    (or ``privacy.samples``), clipped to 2.

    Parameters
    ----------
    path : str or os.PathLike
        A TOML file (UTF-8).

    Returns
    -------
    ProblemFile
        The problem with its expected values and provenance.

    Raises
    ------
    ValueError
        One line naming the file and the field, for invalid TOML, non-UTF-8 text, unknown keys, missing
        or conflicting fields (``radius`` and ``delta``; more than one data source; no ``[utility]``), empty
        category values in a CSV (records or a count table's labels) and every invalid
        value (``"problem file <name>: <field> must <rule>, got <field>=<value>"``).
    FileNotFoundError
        If ``path`` does not exist.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "coin.toml"
    >>> _ = path.write_text('[data]\ncounts = [30, 70]\n[privacy]\nepsilon = 1.0\nradius = 0.1\n'
    ...                     '[utility]\nkind = "mutual_information"\n')
    >>> load_problem(path).problem.form
    'proposition2'
    """
    file = Path(path)
    reader = _Reader(file)
    try:
        doc = tomllib.loads(file.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"problem file {file.name}: not valid TOML ({exc})") from None
    except UnicodeDecodeError:
        raise ValueError(f"problem file {file.name}: not UTF-8 text") from None
    if set(doc) - _TOP:
        raise reader.fail("the file", f"only have top-level keys {sorted(_TOP)}", sorted(set(doc) - _TOP))
    name = doc.get("name", file.stem)
    # The name becomes the output file name <name>.mech.json: a plain stem only, never a path.
    if not isinstance(name, str) or not _NAME.fullmatch(name) or name in (".", ".."):
        raise reader.fail("name", "be a plain file stem (letters, digits, '.', '_', '-'; no '/' or '..')", name)
    privacy = reader.table(doc, "privacy", _PRIVACY)
    if "epsilon" not in privacy:
        raise reader.fail("[privacy]", "give epsilon", sorted(privacy))
    if ("radius" in privacy) == ("delta" in privacy):
        raise reader.fail("[privacy]", "give exactly one of radius, delta", sorted(privacy))
    data, deprecated = deprecated_source(file, reader.table(doc, "data", _DATA))
    try:
        prior = _prior(reader, data)
        if "utility" not in doc:  # no default: mutual information's designs may not decode frequencies (issue 61)
            raise ValueError(f"problem file {file.name}: [utility] must be given, with kind = \"estimation_mse\" to "
                             f"decode category frequencies or another of {_KINDS}, got no [utility] table")
        utility = _utility(reader, reader.table(doc, "utility", None), prior)
        epsilon = reader.number(privacy, "privacy", "epsilon")
        if "radius" in privacy:
            problem = DesignProblem(prior, epsilon, reader.number(privacy, "privacy", "radius"), utility, name=name)
        else:
            samples = privacy.get("samples")
            if samples is not None and prior.samples is not None and samples != prior.samples:
                raise reader.fail("privacy.samples", f"equal the number of records behind the data "
                                  f"({prior.samples}) or be omitted", samples)
            problem = DesignProblem.from_delta(prior, epsilon, reader.number(privacy, "privacy", "delta"), utility,
                                               samples=samples, name=name)
    except (ValueError, TypeError) as exc:
        if str(exc).startswith("problem file"):
            raise
        raise ValueError(f"problem file {file.name}: {str(exc).splitlines()[0]}") from None
    expected = reader.table(doc, "expected", None, required=False)
    provenance = reader.table(doc, "provenance", None, required=False)
    description = doc.get("description", "")
    if not isinstance(description, str):
        raise reader.fail("description", "be a string", description)
    loaded = ProblemFile(file, problem, description, dict(expected), dict(provenance), _release(reader, doc, problem))
    warn_deprecated(deprecated)
    return loaded


def _release(reader: _Reader, doc: dict[str, Any], problem: DesignProblem) -> dict[str, Any]:
    """The ``[release]`` table, checked: the policy and what it needs (``releases``, ``report_epsilon``)."""
    release = reader.table(doc, "release", _RELEASE, required=False)
    if not release:
        return {}
    policy = release.get("policy")
    needs = {"single": set(), "memoized": set(), "repeated": {"releases"}, "two-layer": {"report_epsilon"}}
    if policy not in needs:
        raise reader.fail("release.policy", f"be one of {sorted(needs)}", policy)
    given = set(release) - {"policy"} - ({"link_epsilon"} if policy == "two-layer" else set())
    if given != needs[policy]:
        raise reader.fail("[release]", f"give exactly {sorted(needs[policy]) or 'no other key'} with policy "
                          f"{policy!r}", sorted(given))
    if policy == "repeated":
        releases = release["releases"]
        if isinstance(releases, bool) or not isinstance(releases, int) or releases < 1:
            raise reader.fail("release.releases", "be a positive integer", releases)
    if policy == "two-layer":
        report = reader.number(release, "release", "report_epsilon")
        if not 0 < report <= problem.epsilon:
            raise reader.fail("release.report_epsilon", f"lie in (0, privacy.epsilon = {problem.epsilon:g}] (the "
                              "per-report budget; privacy.epsilon is the lifetime one)", report)
        if problem.utility.kind != "estimation_mse":
            raise reader.fail("release.policy", "be 'two-layer' only with [utility] kind = \"estimation_mse\"",
                              policy)
        if "link_epsilon" in release:
            link = reader.number(release, "release", "link_epsilon")
            if not link > 0:
                raise reader.fail("release.link_epsilon", "be positive (the linkability budget: the "
                                  "LDP level of the reports on the permanent outputs; omit it for none)", link)
    return dict(release)
