"""mechdesign — design and calibrate privacy mechanisms under pointwise maximal leakage (PML).

Glossary (one vocabulary across the package, the CLI flags and the JSON files):

``epsilon`` (``--epsilon``)
    privacy budget in nats (natural logarithm).
``delta`` (``--delta``)
    failure probability in (0, 1]: the chance that the true distribution lies outside the
    uncertainty set (Section III of [E]).
``radius``
    ℓ1 radius β ∈ [0, 2] of the uncertainty ball around the estimated prior; 2 is the whole simplex (LDP).
``prior`` (``--counts C1,C2,…`` or ``--data FILE --column COL``)
    probability vector over the input alphabet X (N = |X| categories), estimated from counts or records.
``samples`` / ``m`` (``--samples M``)
    number of i.i.d. records from which the prior was estimated (eq. 13 of [E]) — always a count.
``p_hat_min`` (``--p-hat-min``)
    smallest estimated probability of a binary attribute.
``matrix`` (``--matrix FILE``)
    ``matrix[x, y] = P(Y = y | X = x)``; rows sum to one.

Randomness: every function that privatizes records draws from a cryptographically secure generator unless
a seed is passed (:func:`mechdesign.record_rng`), as the CLI does unless ``--seed`` is given.

[E] = Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions"
(``shared/papers/001_…``); equation numbers in docstrings refer to it unless another paper is named.
"""

import lazy_loader

__version__ = "0.1.0"

# The public API is listed once, in ``__init__.pyi``: type checkers read it as the stub, and lazy_loader
# resolves each name on first use, so ``import mechdesign`` stays light (cvxpy, scipy, pandas and
# matplotlib are imported only by the parts that need them).
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
__all__ = ["__version__", *__all__]
