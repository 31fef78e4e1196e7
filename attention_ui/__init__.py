"""Streamlit side of Attention Lab: the page kit, figures, tables, messages. Pages stay thin.

See the README's "Project layout" and docs/architecture.md for what lives where.
"""
