"""What a learner or a teacher takes out of the app (issue 45): the offline lesson (one HTML file),
the SCORM 1.2 package (the lesson and a quiz that reports to the course platform) and the quiz as
Moodle XML or GIFT. Pure builders (no Streamlit calls): the pages' download buttons
(:mod:`attention_ui.takehome.buttons`) and the ``attention-lab`` command write the same files.
"""
