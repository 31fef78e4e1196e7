"""Modules only the playground page uses: its settings, steps, cell explainer, presenter mode,
pretrained view, URL state, example sentences and downloads.

Import from the submodules; this package exports nothing itself.
"""
