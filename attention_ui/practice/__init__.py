"""Practice by hand (issue 19): predict-then-reveal, shared by the playground, the masks, cost and path
pages. The guided path and the printable worksheets are their own pages' packages
(``attention_ui.path``, ``attention_ui.worksheet``; the worksheet builder, fpdf2, a slow import, is
imported inside the function that builds a PDF).

``predict_view`` is imported here so a page reaches it as ``practice.predict_view``.
"""

from attention_ui.practice import predict_view

__all__ = ["predict_view"]
