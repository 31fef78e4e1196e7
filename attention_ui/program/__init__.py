"""The layer as code (issue 43), shared by several pages: the code tab beside a step (the playground,
the masks and multi-head labs), the notebook download (the playground and ``python -m attention_core
code --notebook``), and the exam code questions (the quiz, the worksheets, the guided path and the live
class). The program, its traps and the questions come from ``attention_core.codegen`` and
``attention_core.codegen_questions``; this package only words and draws them.

Nothing here imports Streamlit at module level except the views, so the command line can write a
notebook without it.
"""
