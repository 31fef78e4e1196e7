"""Diagnostic for bench runs only (issue 47): trace what each session of an app process receives from
its browser and what its script runners do with it, to see where a presenter's click is lost.

Not loaded by the app. Put this folder first on the app processes' PYTHONPATH (the bench's servers
inherit the environment):

    PYTHONPATH=bench/streamlit_session_trace .venv/bin/python bench/hall.py --students 200 --teacher-log

Each line in the servers' logs (``/tmp/attnlab-live-*/run/streamlit-r*.log``) starts ``DIAG-TRACE``
with a monotonic time and the session's id (or in ``$DIAG_TRACE_FILE.<pid>`` when that is set), then one of:

- ``back rerun frag=<id|-> auto=<0|1> triggers=<widget ids with a pressed trigger>``: a rerun request
  from the browser (auto-reruns of a ``run_every`` fragment are traced only with ``DIAG_TRACE_ALL=1``);
- ``back <type>``: any other message from the browser (not ``app_heartbeat``);
- ``request runner=<none|CONTINUE|RERUN|STOP>``: AppSession.request_rerun for such a request, with the
  state of the session's current runner (STOP: a new runner is made);
- ``drop-fragment frag=<id>``: Streamlit dropped the request because the fragment is gone;
- ``event <name> current=<0|1>``: a script runner's event reaching the event loop (``current=0``:
  Streamlit ignores it, it comes from a runner that is no longer the session's).

Only sessions that have sent a request with a pressed trigger (a click: the teacher, a student's
Send) are traced after it, so 300 students ticking every second do not flood the log. It wraps
private methods of Streamlit 1.67; it does nothing outside ``python -m streamlit run``, and a
failure to install is said once and leaves Streamlit as it is.
"""

import os
import sys
import time

if sys.argv[:2] == ["-m", "run"]:  # how sys.argv looks at start-up for `python -m streamlit run`
    try:
        from streamlit.runtime import app_session as _s

        _ALL = os.environ.get("DIAG_TRACE_ALL") == "1"
        _watched: set[str] = set()

        _path = os.environ.get("DIAG_TRACE_FILE")  # else the server's log (stderr)
        _out = open(f"{_path}.{os.getpid()}", "a", buffering=1) if _path else sys.stderr  # noqa: SIM115

        def _say(session, text):
            print(f"DIAG-TRACE {time.monotonic():.3f} {session.id[:8]} {text}", file=_out, flush=True)

        def _triggers(widget_states):
            out = []
            for w in getattr(widget_states, "widgets", ()):
                if w.WhichOneof("value") == "trigger_value" and w.trigger_value:
                    out.append(w.id.rsplit("-", 1)[-1][:40])
            return out

        _backmsg = _s.AppSession.handle_backmsg

        def handle_backmsg(self, msg):
            kind = msg.WhichOneof("type")
            if kind == "rerun_script":
                cs = msg.rerun_script
                pressed = _triggers(cs.widget_states)
                if pressed:
                    _watched.add(self.id)
                    _owners[id(self._session_state)] = self
                if _ALL or pressed or self.id in _watched and not cs.is_auto_rerun:
                    _say(self, f"back rerun frag={cs.fragment_id or '-'} auto={int(cs.is_auto_rerun)} "
                               f"triggers={','.join(pressed) or '-'}")  # fmt: skip
            elif kind != "app_heartbeat" and (self.id in _watched or _ALL):
                _say(self, f"back {kind}")
            return _backmsg(self, msg)

        _request = _s.AppSession.request_rerun

        def request_rerun(self, client_state=None, *args, **kwargs):
            if self.id in _watched and client_state is not None and not client_state.is_auto_rerun:
                runner = getattr(self, "_scriptrunner", None)
                state = (
                    "none"
                    if runner is None
                    else getattr(getattr(runner._requests, "_state", None), "name", "?")
                )
                frag = client_state.fragment_id
                if frag and not self.has_fragment(frag):
                    _say(self, f"drop-fragment frag={frag}")
                _say(self, f"request runner={state} frag={frag or '-'}")
            return _request(self, client_state, *args, **kwargs)

        _event = _s.AppSession._handle_scriptrunner_event_on_event_loop

        def handle_event(self, sender, event, forward_msg=None, *args, **kwargs):
            if self.id in _watched:
                kind = forward_msg.WhichOneof("type") if forward_msg is not None else "-"
                if kind not in ("delta", "ref_hash"):
                    extra = f" pg_step={_step(self._session_state)}" if "STOPPED" in event.name else ""
                    _say(
                        self,
                        f"event {event.name} current={int(sender is self._scriptrunner)} msg={kind}{extra}",
                    )
            return _event(self, sender, event, forward_msg, *args, **kwargs)

        from streamlit.runtime.state import session_state as _ss

        _owners: dict[int, object] = {}  # id(SessionState) -> its watched AppSession

        def _step(state):
            try:
                return state["pg_step"]
            except KeyError:
                return "-"
            except Exception as exc:  # noqa: BLE001
                return f"?{type(exc).__name__}"

        _will_rerun = _ss.SessionState.on_script_will_rerun

        def on_script_will_rerun(self, fresh_widget_states, *args, **kwargs):
            session = _owners.get(id(self))
            pressed = _triggers(fresh_widget_states) if session is not None else []
            if pressed:
                known = []
                for w in fresh_widget_states.widgets:
                    if w.WhichOneof("value") == "trigger_value" and w.trigger_value:
                        meta = self._new_widget_state.widget_metadata.get(w.id)
                        known.append(f"{w.id.rsplit('-', 1)[-1][:30]}:"
                                     f"{'callback' if meta is not None and meta.callback else 'NO-METADATA' if meta is None else 'no-callback'}")  # fmt: skip
                before = _step(self)
            out = _will_rerun(self, fresh_widget_states, *args, **kwargs)
            if pressed:
                _say(session, f"callbacks {' '.join(known)} pg_step {before} -> {_step(self)}")
            return out

        _ss.SessionState.on_script_will_rerun = on_script_will_rerun
        _s.AppSession.handle_backmsg = handle_backmsg
        _s.AppSession.request_rerun = request_rerun
        _s.AppSession._handle_scriptrunner_event_on_event_loop = handle_event
        print("DIAG-TRACE installed", file=sys.stderr, flush=True)
    except Exception as exc:  # a diagnostic must never stop the app
        print(f"DIAG-TRACE: not installed ({exc!r})", file=sys.stderr, flush=True)
