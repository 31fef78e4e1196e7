"""Plotly figure builders (pure: arrays and translated labels in, ``go.Figure`` out, no Streamlit).

``base`` is the toolkit every builder shares (colours, template, escaping, ticks, margins),
``heatmaps`` draws matrices (the playground's maps and every lab's heatmaps), and each page has
its own module (``sqrt``, ``masks``, ``multihead``, ``cost``, ``lookalikes``, ``pretrained``,
``playground``). Import from the submodules; this package exports nothing itself.
"""
