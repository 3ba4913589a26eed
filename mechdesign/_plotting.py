"""Plots for mechanisms and comparisons (matplotlib, imported only when a function is called).

* :func:`plot_mechanism`: the matrix ``W[x, y] = P(y | x)`` as a labelled heatmap, each cell annotated.
* :func:`plot_comparison`: one quantity (utility, MSE, …) against ε for several mechanisms, with distinct
  line styles and markers so that overlapping curves stay visible in grey-scale print.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["STYLES", "plot_comparison", "plot_mechanism"]

# (line style, marker) pairs cycled over the series: distinguishable without colour and when curves coincide.
STYLES = (("-", "o"), ("--", "s"), (":", "^"), ("-.", "D"), ((0, (5, 1, 1, 1)), "v"), ((0, (1, 1)), "x"))


def _axes(ax: Any, figsize: tuple[float, float]) -> Any:
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    _, ax = plt.subplots(figsize=figsize, layout="constrained")
    return ax


def plot_mechanism(mechanism: Any, *, ax: Any = None, title: str | None = None, annotate: bool = True,
                   cmap: str = "Blues") -> Any:
    """Draw a mechanism's matrix as a heatmap with its input (rows) and output (columns) labels.

    Parameters
    ----------
    mechanism : Mechanism or array_like
        A :class:`~mechdesign.core.Mechanism` (labels used) or a row-stochastic matrix.
    ax : matplotlib Axes, optional
        Where to draw; a new figure is made when omitted.
    title : str, optional
        Axes title.
    annotate : bool
        Write each probability in its cell (skipped automatically above 12 × 12).
    cmap : str
        Matplotlib colour map (values are on the fixed scale [0, 1]).

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from mechdesign import randomized_response
    >>> ax = plot_mechanism(randomized_response(3, 1.0, ["a", "b", "c"]))
    >>> [t.get_text() for t in ax.get_yticklabels()]
    ['a', 'b', 'c']
    """
    from mechdesign.core._mechanism import as_mechanism

    mech = as_mechanism(mechanism)
    w = mech.matrix
    ax = _axes(ax, (2.6 + 0.7 * w.shape[1], 1.8 + 0.45 * w.shape[0]))
    image = ax.imshow(w, cmap=cmap, vmin=0.0, vmax=1.0, aspect="auto")
    ax.set_xticks(range(w.shape[1]), mech.outputs, rotation=30 if w.shape[1] > 4 else 0, ha="right"
                  if w.shape[1] > 4 else "center")
    ax.set_yticks(range(w.shape[0]), mech.inputs)
    ax.set_xlabel("output $y$")
    ax.set_ylabel("input $x$")
    if annotate and max(w.shape) <= 12:
        for (x, y), value in np.ndenumerate(w):
            ax.text(y, x, f"{value:.2f}", ha="center", va="center", fontsize=8,
                    color="white" if value > 0.6 else "black")
    ax.figure.colorbar(image, ax=ax, label=r"$P(y \mid x)$", shrink=0.8)
    if title:
        ax.set_title(title)
    return ax


def plot_comparison(epsilons: Sequence[float], series: Mapping[str, Sequence[float]], *, ax: Any = None,
                    ylabel: str = "utility", title: str | None = None, logy: bool = False,
                    errors: Mapping[str, Sequence[float]] | None = None) -> Any:
    """Plot one quantity against ε for several mechanisms (e.g. utility or MSE of a design vs LDP baselines).

    Parameters
    ----------
    epsilons : sequence of float
        The privacy budgets (x axis, nats).
    series : mapping of str to sequence of float
        Legend label → values, one per ε.
    ax : matplotlib Axes, optional
        Where to draw; a new figure is made when omitted.
    ylabel, title : str
        Axis label and title (mathtext such as ``"$I(X;Y)$"`` is rendered).
    logy : bool
        Logarithmic y axis (useful for MSE).
    errors : mapping of str to sequence of float, optional
        Symmetric error bar half-widths per label (drawn light, so that they do not hide the lines).

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> ax = plot_comparison([0.5, 1, 2], {"design": [0.4, 0.9, 1.5], "k-RR": [0.01, 0.04, 0.25]})
    >>> [t.get_text() for t in ax.get_legend().get_texts()]
    ['design', 'k-RR']
    """
    x = np.asarray(epsilons, dtype=float)
    ax = _axes(ax, (5.0, 3.4))
    for i, (label, values) in enumerate(series.items()):
        style, marker = STYLES[i % len(STYLES)]
        y = np.asarray(values, dtype=float)
        if y.shape != x.shape:
            raise ValueError(f"series[{label!r}] must have one value per epsilon ({x.size}), got {y.size} values")
        (line,) = ax.plot(x, y, linestyle=style, marker=marker, markersize=5, markerfacecolor="none",
                          linewidth=1.6, label=label)
        if errors is not None and label in errors:
            ax.errorbar(x, y, yerr=np.asarray(errors[label], dtype=float), fmt="none", ecolor=line.get_color(),
                        alpha=0.35, elinewidth=0.8, capsize=2)
    ax.set_xlabel(r"$\varepsilon$ (nats)")
    ax.set_ylabel(ylabel)
    if logy:
        ax.set_yscale("log")
    ax.grid(True, alpha=0.3)
    ax.legend(frameon=False)
    if title:
        ax.set_title(title)
    return ax
