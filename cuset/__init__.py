"""CuSeT Workbench: CUDA-Sensitive Instruction Tuning for code LLMs.

The library behind the app and the `cuset` CLI. One module per pipeline stage, in the order
data flows (see README.md):

    cuset.data         samples: bundled corpus, JSONL / Parquet / Hugging Face loaders
    cuset.sensitivity  CUDA-sensitive spans from the tree-sitter-cuda syntax tree
    cuset.models       model resolution: the embedded default, any HF causal LM, a tiny test model
    cuset.confidence   teacher-forced per-token confidence, cached on disk
    cuset.regions      low-confidence sensitive tokens clustered into regions
    cuset.objective    token masks, sample weights and the CuSeT loss (pure math)
    cuset.workspace    the workspace folder and its SQLite store

Nothing heavy happens at import time: models load and parsers start on first use.
"""

__version__ = "0.1.0"
