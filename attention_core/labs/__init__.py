"""The computations behind each lab page, one module per lab, built from the core's step functions.

Import from the submodules; this package exports nothing itself.
"""
