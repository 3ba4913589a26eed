"""Sparse histograms under (ε, δ)-DP ([S])."""

# The analyses of [S] (kept here, free of heavy imports, so the CLI parser can list them).
METHODS = ("gshm-add", "gshm-exact", "csh-add", "csh-tighter", "csh-add-quad", "csh-tighter-quad")
