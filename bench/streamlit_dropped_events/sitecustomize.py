"""Diagnostic for bench runs only (issue 27): log every event Streamlit's AppSession drops because
it comes from a script runner that is no longer the session's current one.

Not loaded by the app. To use it, put this folder first on the app processes' PYTHONPATH:

    PYTHONPATH=bench/streamlit_dropped_events .venv/bin/python bench/classroom_live.py --students 30

(the bench's servers inherit the environment); each dropped event is one line
``DIAG-DROPPED session=<id> event=<event> msg=<ForwardMsg type>`` in the servers' logs
(the bench's run folder, ``/tmp/attnlab-live-*/run/streamlit-r*.log``). It wraps a private method of
Streamlit 1.67 (``AppSession._handle_scriptrunner_event_on_event_loop``); Python imports this file
at start-up in every process, and it does nothing outside ``python -m streamlit run``.
"""

import sys

if sys.argv[:2] == ["-m", "run"]:  # how sys.argv looks at start-up for `python -m streamlit run`
    try:
        from streamlit.runtime import app_session as _app_session

        _original = _app_session.AppSession._handle_scriptrunner_event_on_event_loop

        def _logged(self, sender, event, forward_msg=None, *args, **kwargs):
            if sender is not self._scriptrunner:
                kind = forward_msg.WhichOneof("type") if forward_msg is not None else "-"
                current = "none" if self._scriptrunner is None else "other"
                print(f"DIAG-DROPPED session={self.id[:8]} event={event.name} msg={kind} current={current}",
                      file=sys.stderr, flush=True)  # fmt: skip
            return _original(self, sender, event, forward_msg, *args, **kwargs)

        _app_session.AppSession._handle_scriptrunner_event_on_event_loop = _logged
    except Exception as exc:  # a diagnostic must never stop the app
        print(f"DIAG-DROPPED: not installed ({exc!r})", file=sys.stderr, flush=True)
