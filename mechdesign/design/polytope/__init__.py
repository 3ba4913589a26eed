"""The column polytope of Proposition 2 ([E] eq. 40-43).

Its vertices, the closed-form extremal mechanisms
(Theorem 5) and the LP over the vertices.

Floor 1 of the design engine: imports only the problem floor (``problem``, ``utility``) and ``core``.
"""
