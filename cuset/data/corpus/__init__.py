"""The bundled training corpus: KernelBench-format instruction -> CUDA-solution samples.

Every sample is generated from templates in this package, one module per op-family group
(`elementwise`; `reduction`, `reduction_all`; `softmax_norm`, `softmax_variants`; `scan`,
`scan_vector`; `matmul`, `matvec`; `transpose`; `histogram`, `counting`; `fused`,
`fused_rows`), with `rowwise` (row-kernel builder) and `host` (host-wrapper idioms) shared.
`kernelbench` renders a template's spec into the task / instruction / response texts and
`build` numbers, renders and writes them. Four op families are held out entirely
(`build.HELD_OUT_FAMILIES`) for the evaluation suite.

    python -m cuset.data.corpus                 # regenerate cuset/data/bundled/
    python -m cuset.data.corpus --check         # exit 1 if the shipped files are stale
    python -m cuset.data.corpus.verify [--full] # compile every sample's CUDA with nvcc
    python cuset/data/corpus/gpu_check.py       # on a CUDA machine: run every sample vs its task
"""

from cuset.data.corpus.build import (
    CORPUS_PATH,
    FAMILIES,
    HELD_OUT_FAMILIES,
    SPLIT_PATH,
    build_samples,
    render_files,
    split_summary,
    stale_files,
    write_files,
)

__all__ = [
    "CORPUS_PATH",
    "FAMILIES",
    "HELD_OUT_FAMILIES",
    "SPLIT_PATH",
    "build_samples",
    "render_files",
    "split_summary",
    "stale_files",
    "write_files",
]
