"""Evaluation of generated CUDA solutions: compiling, sandboxed running, checking and scoring.

Generated code is untrusted: it only ever runs through `cuset.evaluate.sandbox`, never inside
the app or evaluator process (see DESIGN.md, "Evaluation").
"""
