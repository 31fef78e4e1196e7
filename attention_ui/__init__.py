"""Streamlit-side helpers of Attention Lab: figures, tables, messages. Pages stay thin."""
