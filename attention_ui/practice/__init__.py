"""Practice by hand (issue 19): predict-then-reveal, printable worksheets, a guided path.

``predict_view`` is imported here so a page reaches it as ``practice.predict_view``; the worksheet
builder (fpdf2, a slow import) is not: import it inside the function that builds a PDF.
"""

from attention_ui.practice import predict_view

__all__ = ["predict_view"]
