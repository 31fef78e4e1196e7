"""Live class, a student's page (phones first): join with the code, follow the teacher, answer polls.

Everything is in attention_ui/classroom/student_view.py; words in the ``class`` catalog.
"""

from __future__ import annotations

from attention_ui.classroom import student_view
from attention_ui.language import translator

t = translator()
student_view.page(t)  # with its title (small on a joined phone: its first screen is the step's chart)
