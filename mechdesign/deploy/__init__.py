"""Deployment: mechanism files, privatization, decoding, scale-out."""
