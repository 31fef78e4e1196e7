"""Streamlit side of Attention Lab: the page kit, figures, tables, messages. Pages stay thin.

See docs/project-layout.md and docs/architecture.md for what lives where.
"""
