"""CLI verbs, one module each (discovered by :mod:`mechdesign.cli`)."""
