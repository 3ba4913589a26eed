"""Noise calibrators: additive (binary), Laplace histograms, sparse histograms."""
