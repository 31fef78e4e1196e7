"""Pretrained models run by our own NumPy forward passes (weights come from installed packages).

Import from the submodules; this package exports nothing itself, so that importing one model
never loads another.
"""
