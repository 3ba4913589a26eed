"""Laplace histograms under PML ([H])."""
