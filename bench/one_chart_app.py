"""The smallest Plotly page Streamlit can serve: a title and one 6×6 heatmap (bench/cold_start.py).

Its cold start is the platform's own minimum on this machine (Python starting Streamlit, the browser
loading Streamlit's front end and Plotly's 4.7 MB chunk, one chart drawn), with nothing of ours.

    streamlit run bench/one_chart_app.py
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import streamlit as st

st.set_page_config(page_title="one chart", layout="wide")
st.title("one chart")
z = np.random.default_rng(0).standard_normal((6, 6))
st.plotly_chart(go.Figure(go.Heatmap(z=z, colorscale="RdBu", zmid=0)), config={"displaylogo": False})
