"""A namespace's public list resolved on first use: the ``__getattr__`` and ``__dir__`` every namespace shares.

Each public namespace lists its names in ``__all__`` and maps each to the private module that defines it
(``_WHERE``, kept beside ``__all__``); :func:`attach` turns that map into the module's hooks, so that
``import mechdesign.core`` stays light and a name's module is imported when the name is first used (PEP 562).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["attach"]


def attach(package: str, where: Mapping[str, str], names: Sequence[str]) -> tuple[Callable[[str], Any],
                                                                                   Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package`` for names defined in its private modules.

    Parameters
    ----------
    package : str
        The namespace's ``__name__``.
    where : mapping of str to str
        Name → the module under ``package`` that defines it (``"_leakage"``).
    names : sequence of str
        The namespace's ``__all__``: what ``dir()`` lists besides the module's own globals.

    Returns
    -------
    tuple of callable
        ``(__getattr__, __dir__)``: a name is imported once, then bound on the module (later lookups skip the
        hook); an unknown name raises AttributeError.
    """
    module = sys.modules[package]

    def __getattr__(name: str) -> Any:
        if name in where:
            value = getattr(importlib.import_module(f"{package}.{where[name]}"), name)
            setattr(module, name, value)
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted({*vars(module), *names})

    return __getattr__, __dir__
