"""The live class's session keys (prefix ``cls``), declared once: who this browser is in a class, the
teacher's panel and the presenter's strip, a student's phone, and the polls.

The two class pages (app_pages/class_teach.py, app_pages/class_join.py) are not labs: they have no
:class:`attention_ui.kit.Page`, no learner's settings, no tables switch, no presenter mode of their own
(the presenter's strip is drawn inside the playground's) and no translated choices, so the kit's keys
do not apply (``kit=False``); the one kit family they use, the take-home buttons, is declared here.
Nothing here is a learner's setting: every entry says why it is kept. No Streamlit here.
"""

from __future__ import annotations

from attention_ui.settings_table import Setting, Table

TABLE = Table(
    "cls",
    # --- who this browser is (attention_ui/classroom/state.py) --------------------------------------
    Setting("teacher", why="this browser's class as teacher: {sid, token, code} (also in a cookie)"),
    Setting("student", why="this browser's place in a class as student: {sid, token, code, nick}"),
    Setting("ended", why="the class this browser ended last: its results stay downloadable"),
    Setting("client", why="this session's stand-in address outside a browser (state.client_key)"),
    Setting("teacher_cookie_tried", why="the teacher's cookie was read once this session"),
    Setting("ended_cookie_tried", why="the ended class's cookie was read once this session"),
    Setting("student_cookie_tried", why="the student's cookie was read once this session"),
    Setting("view_owner", why="the class whose view this session's playground state is (follow.py)"),
    # --- the teacher's panel (teacher_view.py, app_pages/class_teach.py) ---------------------------
    Setting("new_key", why="a class just started: say once where its key was saved"),
    Setting("set_cookie", why="after a start or resume: the teacher cookie's age, written by the next run"),
    Setting("clear_cookie", why="after 'End the class': clear the teacher's cookie on the next run"),
    Setting("error", why="a store refusal from a callback, said by the next run (catalog key, values)"),
    Setting("end_confirm", why="'End the class' was pressed: its dialog asks first"),
    Setting("join_url_input", why="the start panel's join address box"),
    Setting("start", why="the start panel's 'Start a class' button"),
    Setting("resume_form", why="the 'Resume control' form"),
    Setting("resume_code", why="the 'Resume control' form's code box"),
    Setting("resume_key", why="the 'Resume control' form's key box"),
    Setting("key_download", why="the key file's download button"),
    Setting("to_presenter", why="the panel's 'Presenter mode' button"),
    Setting("pick", why="the poll picker's question"),
    Setting("open", why="the poll picker's 'Open the poll' button"),
    Setting("hide_open", why="'Hide the answers until the poll is closed' switch (projector)"),
    Setting("live_poll", why="the live fragment's poll box (its CSS keeps it at full opacity)"),
    Setting("live_count", why="the count of students' box (its CSS keeps it at full opacity)"),
    Setting("hist_*", why="a poll's histogram, keyed by the poll's number"),
    Setting("close_*", why="a poll's 'Close' button, keyed by the poll's number"),
    Setting("reveal_*", why="a poll's 'Reveal' button, keyed by the poll's number"),
    Setting("teach_watchdog", why="the panel's reload watchdog's hidden box (class_panel_watchdog.js)"),
    Setting("one_device", why="the 'one vote per device' switch, set from the store each run"),
    Setting("export", why="the results CSV download button"),
    Setting("tk_*", why="the course files' take-home buttons (takehome.buttons.course_files, prefix cls)"),
    Setting("end", why="the 'End the class' button"),
    Setting("end_box", why="the end dialog's box"),
    Setting("end_yes", why="the end dialog's 'Yes' button"),
    Setting("end_no", why="the end dialog's 'No' button"),
    # --- the presenter's strip and the playground's banner (presenter_hook.py) ---------------------
    Setting("present_start", why="presenter mode's 'Start a live class' button"),
    Setting("present_strip", why="the running class's strip above the slide (class_present_strip.css)"),
    Setting("present_code", why="the strip's 'Show the join code' button (the presenter's keys open it)"),
    Setting("present_panel", why="the strip's 'Class panel' button"),
    Setting("code_slide", why="the step at which the join-code slide was opened"),
    Setting("code_qr", why="the join-code slide's QR code box (class_present_strip.css)"),
    Setting("code_big", why="the join-code slide's code box (class_present_strip.css)"),
    Setting("code_url", why="the join-code slide's address box (class_present_strip.css)"),
    Setting("pg_banner", why="the normal playground's banner while this browser runs a class"),
    Setting("pg_back", why="the banner's 'Back to presenter mode' button"),
    # --- a student's phone (student_view.py, app_pages/class_join.py) -------------------------------
    Setting("join_form", why="the join form"),
    Setting("join_code", why="the join form's code box"),
    Setting("join_nick", why="the join form's nickname box"),
    Setting("student_cookie", why="just joined: the next run writes the student's cookie"),
    Setting("leave", why="'Join another class' after the class ended"),
    Setting("joined_head", why="a joined page's title box (class_joined_head.css)"),
    Setting("seen", why="the class's state this page last drew (pulse_cache.progress)"),
    Setting("away", why="the student is at their own step, not the teacher's"),
    Setting("own_step", why="the student's own step while away"),
    Setting("drawing", why="set while a full run draws the page: the watcher's inline run checks nothing"),
    Setting("drawn_at", why="when this session's last full run ended (time.monotonic)"),
    Setting("drawn_step", why="the teacher's step that run drew"),
    Setting("drawn_*", why="the full run's hidden marker of the state it drew (the watchdog reads it)"),
    Setting("expect_*", why="the watcher's hidden marker of the state the page should show"),
    Setting("resync", why="the phone's watchdog's hidden box (class_watchdog.js)"),
    Setting("resync_now", why="the phone's watchdog's hidden button: a full run"),
    Setting("presence_at", why="when this page last told the store it is open"),
    Setting("back", why="'Back to the teacher's step' button"),
    Setting("own_prev", why="the student's own 'Previous' button"),
    Setting("own_next", why="the student's own 'Next' button"),
    Setting("slide", why="the step's box on a phone (class_joined_head.css)"),
    Setting("explore", why="'Explore on my own' button"),
    # --- a poll on a phone (student_view._draw_poll) and a code poll's consequences ----------------
    Setting("poll_box", why="the poll's box on a phone"),
    Setting("choice_*", why="a poll's answer radio, keyed by the poll's id"),
    Setting("send_*", why="a poll's 'Send' button, keyed by the poll's id"),
    Setting("ack", why="the last answer sent: (poll id, choice, refusal's catalog key)"),
    Setting(
        "code_*",
        why="a revealed code poll's consequences (code_polls.show_consequences_of), keyed by the poll's "
        "number on the panel and its id on a phone",
    ),
    kit=False,
)
