"""Writing record files: :func:`write_record_file` (:mod:`mechdesign.mechfile._record` has the format and reads them).

The record-level guarantee is recomputed from the factors or the matrix before anything is written (solver-free,
:func:`~mechdesign.mechfile.record_epsilon`), a stated ε it does not achieve is refused, and the file is
replaced atomically (complete or absent).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from mechdesign import _validation as v
from mechdesign._errors import CertificateError
from mechdesign._files import atomic_path
from mechdesign.core._mechanism import Mechanism
from mechdesign.core._record_codes import joint_labels
from mechdesign.core._record_prior import JointPrior
from mechdesign.core._sample_radius import design_radius, radius_for_delta
from mechdesign.mechfile._format import (
    FORMAT_NAME,
    FORMAT_VERSION,
    GUARANTEE_SLACK,
    RADIUS_RTOL,
    FileChecker,
    check_radius,
    file_text,
    json_block,
    provenance_versions,
)
from mechdesign.mechfile._policy import normalize_release, stated_release
from mechdesign.mechfile._record import record_epsilon, record_release_achieved

__all__ = ["write_record_file"]


def _prior_block(prior: JointPrior) -> dict[str, Any]:
    return {"letters": [int(i) for i in prior.indices], "counts": [int(c) for c in prior.counts]}


def write_record_file(path: str | os.PathLike[str], prior: JointPrior, *, epsilon: float, radius: float,
                      delta: float | None = None, factors: Any = None, mechanism: Mechanism | None = None,
                      sampling: Any = None, utility: dict[str, Any] | None = None,
                      baselines: dict[str, Any] | None = None, certificate: dict[str, Any] | None = None,
                      provenance: dict[str, Any] | None = None, release: Any = None) -> Path:
    """Write a product (``factors``), sampled (``factors`` and ``sampling``) or joint record file; return the path.

    The record-level guarantee is recomputed first (:func:`record_epsilon`); a stated ε missed by more than
    float noise is never written. A radius from 1e-12 (relative) below β*(δ, m, N) ([E] eq. 37, N the joint
    size) up to :func:`~mechdesign.core.design_radius` (β* rounded up twice, the radius record designs
    at δ use) is raised to the latter, and an ε missed by at most 1e-12 is raised to the achieved one: the file
    then verifies exactly.

    Parameters
    ----------
    path : str or os.PathLike
        The target file (replaced atomically).
    prior : JointPrior
        The joint estimate P̂ (attributes, alphabets, counts, m).
    epsilon : float
        The stated record-level ε (nats).
    radius : float
        β of the joint ball.
    delta : float, optional
        The δ behind ``radius`` (then radius ≥ β*(δ, m, N) is required).
    factors : sequence of Mechanism, optional
        A product design, one factor per attribute with inputs = that attribute's alphabet.
    mechanism : Mechanism, optional
        A joint design with inputs = ``joint_labels(prior.alphabets)``.
    sampling : sequence of float, optional
        With ``factors``: an attribute-sampled design, π_i > 0 summing to one within 1e-9 (no output label may then
        be the empty string: an empty field marks an attribute a record does not report).
    utility, baselines, certificate, provenance : dict, optional
        Optional blocks (provenance merged over the recorded versions).
    release : dict, optional
        The release policy (:func:`~mechdesign.mechfile.normalize_release`): ``None`` for one release
        per run, ``{"policy": "repeated", "releases": T}`` (the record-level leakage of T releases is recomputed
        and stated) or ``{"policy": "memoized"}``.

    Returns
    -------
    pathlib.Path
        ``path``.

    Raises
    ------
    TypeError
        If ``prior`` is not a JointPrior or a factor/mechanism is not a Mechanism.
    ValueError
        Unless exactly one of ``factors`` and ``mechanism`` is given with inputs matching the alphabets, or
        if ε, δ, the radius or ``sampling`` (without ``factors``, or not d probabilities) is invalid.
    MechanismFileError
        If the radius is below β*(δ, m, N), or two labels (attributes, letters of an alphabet, outputs) are the
        same text under Unicode NFC normalisation: the file would be refused on reading.
    CertificateError
        If the design does not achieve the stated record-level ε.
    """
    if not isinstance(prior, JointPrior):
        raise TypeError(f"prior must be a JointPrior, got prior={type(prior).__name__}")
    if (factors is None) == (mechanism is None):
        raise ValueError("write_record_file needs exactly one of factors (product) and mechanism (joint), got "
                         f"factors={factors is not None}, mechanism={mechanism is not None}")
    if sampling is not None and factors is None:
        raise v.fail("sampling", "come with factors (an attribute-sampled design)", sampling)
    mechs = tuple(factors) if factors is not None else ()
    wanted = [(f"factors[{i}]", m, prior.alphabets[i]) for i, m in enumerate(mechs)]
    if mechanism is not None:
        wanted = [("mechanism", mechanism, joint_labels(prior.alphabets))]
    elif len(mechs) != prior.dimension:
        raise v.fail("factors", f"give one mechanism per attribute ({prior.dimension})", len(mechs))
    for name, mech, labels in wanted:
        if not isinstance(mech, Mechanism):
            raise TypeError(f"{name} must be a Mechanism, got {name}={type(mech).__name__}")
        if tuple(mech.inputs) != tuple(labels):
            raise v.fail(f"{name}.inputs", "equal the alphabet (joint labels for a joint design)",
                         list(mech.inputs)[:6])
    pi = None
    if sampling is not None:
        from mechdesign.core._record_capacity import check_probabilities

        pi = check_probabilities(sampling, prior.dimension)
        for name, mech, _ in wanted:
            if "" in mech.outputs:
                raise v.fail(f"{name}.outputs", "not hold the empty string (it marks an unreported attribute)",
                             list(mech.outputs)[:6])
    check = FileChecker(Path(path))  # labels the reader would refuse are refused before anything is computed
    check.labels("attributes", list(prior.attributes))
    for i, alphabet in enumerate(prior.alphabets):
        check.labels(f"alphabets[{i}]", list(alphabet))
    for name, mech, _ in wanted:
        check.labels("outputs" if name == "mechanism" else f"{name}.outputs", list(mech.outputs))
    stated = v.epsilon(epsilon, "epsilon")
    beta = v.radius(radius)
    d = None if delta is None else v.delta(delta)
    if d is not None and prior.size >= 2:
        # Raised over float noise to the radius designs at δ use (JointPrior.radius), as single-column files.
        written = design_radius(d, prior.samples, prior.size)
        if min(radius_for_delta(d, prior.samples, prior.size), 2.0) * (1 - RADIUS_RTOL) <= beta < written:
            beta = written
    guarantee = {"notion": "pml", "level": "record", "epsilon": stated, "delta": d, "radius": beta,
                 "prior": _prior_block(prior), "samples": prior.samples}
    check_radius(check, guarantee, prior.size)
    # Judge the claim on the matrices exactly as the reader rebuilds them from the written floats.
    back = tuple(Mechanism.from_matrix(m.matrix, m.inputs, m.outputs) for m in mechs)
    joint = None if mechanism is None else Mechanism.from_matrix(mechanism.matrix, mechanism.inputs,
                                                                   mechanism.outputs)
    achieved = record_epsilon(prior, beta, back, joint, sampled=pi is not None)
    if achieved > stated:
        if not achieved <= stated + GUARANTEE_SLACK:
            raise CertificateError(f"guarantee.epsilon must be >= the record-level epsilon the design achieves "
                                   f"({achieved!r}), got guarantee.epsilon={stated!r}")
        guarantee["epsilon"] = achieved
    content: dict[str, Any] = {"format": {"name": FORMAT_NAME, "version": FORMAT_VERSION},
                               "attributes": list(prior.attributes),
                               "alphabets": [list(a) for a in prior.alphabets]}
    if mechanism is not None:
        content |= {"inputs": list(mechanism.inputs), "outputs": list(mechanism.outputs),
                    "matrix": mechanism.matrix.tolist()}
    else:
        content["factors"] = [{"inputs": list(m.inputs), "outputs": list(m.outputs), "matrix": m.matrix.tolist()}
                              for m in mechs]
        if pi is not None:
            content["sampling"] = pi.tolist()
    content |= {"guarantee": guarantee, "utility": json_block("utility", utility),
                "baselines": json_block("baselines", baselines),
                "certificate": json_block("certificate", certificate),
                "provenance": {**provenance_versions(), **(json_block("provenance", provenance) or {})}}
    policy = normalize_release(release, (), record=True)
    recomputed = record_release_achieved(prior, beta, policy, back, joint, sampled=pi is not None)
    block = stated_release(policy, *(recomputed or (None, True))).to_json()
    if block is not None:
        content["release"] = json_block("release", block)
    target = Path(path)
    text = file_text(content, target, "record file")  # refused here when the readers would refuse it
    with atomic_path(target) as tmp:
        tmp.write_text(text, encoding="utf-8")
    if recomputed is not None and policy.policy == "repeated":
        from mechdesign.mechfile._accounts import remember_account

        assert policy.releases is not None
        remember_account(content["sha256"], policy.releases, recomputed, "record")  # its readers here reuse it
    return target
