"""The design engine: problem → vertex LP → solve → certify ([E] §V)."""

# The LP solvers behind cvxpy (kept here, free of heavy imports, so the CLI parser can list them).
SOLVERS = ("CLARABEL", "HIGHS")
