"""Core quantities: priors, uncertainty sets, mechanisms, leakage, estimation, assessment."""
