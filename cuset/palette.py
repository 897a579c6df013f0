"""The colours and the method order that every figure shares: the dashboard's plotly figures
(cuset.report) and the paper's matplotlib figures (cuset.figures), and the tables that list
methods (cuset.experiment.results). Plain constants, so either kind of figure reads them without
importing the other.

    from cuset.palette import METHOD_COLOURS, method_sort_key
    sorted(["cuset", "sft", "base"], key=method_sort_key)     # ['base', 'sft', 'cuset']
"""

from __future__ import annotations

from collections.abc import Sequence

# Tokens: blue for CUDA-sensitive, grey for the others, the heatmap's orange for low confidence.
SENSITIVE = "#1f5fbf"
OTHER = "#8c8c8c"
UNSURE = "#cc4c02"
# Okabe-Ito: distinguishable under every common colour-vision deficiency. This order is the
# plotly template's colorway; methods get their own fixed colours below.
OKABE_ITO = ("#0072B2", "#D55E00", "#009E73", "#E69F00", "#56B4E9", "#CC79A7", "#000000", "#999999")
METHOD_ORDER = ("base", "sft", "dft", "token-mask", "region-weight", "cuset")
# One colour per method in every figure, CuSeT in the strongest.
METHOD_COLOURS = {
    "base": "#999999", "sft": "#56B4E9", "dft": "#E69F00", "token-mask": "#009E73",
    "region-weight": "#CC79A7", "cuset": "#D55E00",
}
EXTRA_COLOURS = ("#0072B2", "#000000", "#F0E442")  # for methods not in METHOD_COLOURS (variants), in turn


def method_colours(methods: Sequence[str]) -> dict[str, str]:
    """A colour per method: the fixed ones for known methods, then the spare ones in order."""
    spare = iter(EXTRA_COLOURS * (1 + len(methods) // len(EXTRA_COLOURS)))
    return {m: METHOD_COLOURS.get(m) or next(spare) for m in methods}


def method_sort_key(method: str) -> tuple[int, str]:
    """Known methods in METHOD_ORDER, then the others by name."""
    return (METHOD_ORDER.index(method) if method in METHOD_ORDER else len(METHOD_ORDER), method)
