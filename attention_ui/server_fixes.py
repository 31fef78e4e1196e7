"""Eight changes to Streamlit 1.67's server, installed once per process by app.py.

The first three and the last four were found with the lecture-hall bench (bench/hall.py; the figures
are in bench/RESULTS.md, "A lecture hall of 300"), the fourth by a live-class browser test. They apply to
every session of the process (the app's normal pages share the server with a class), so each one
keeps Streamlit's behaviour for any session it does not need to change. All touch private names of
the pinned Streamlit: each installs itself only where those names are as this module expects and
otherwise leaves Streamlit as it is (:func:`install` says which it installed, and logs the others
once; a test checks that all eight are installed with the pinned version, so an upgrade has to look
at them again). ``ATTENTION_LAB_SERVER_FIXES`` (a
comma-separated subset, or ``none``) is for A/B runs of the bench only.

1. **A finished run's messages are delivered before the next run starts.** A script runner that
   has finished its run (its state is STOP) hands that run's last messages to the event loop as
   callbacks; when a request from the browser (a ``run_every`` tick, a click) is handled before
   those callbacks, Streamlit starts a new runner at once and then ignores every event of the old
   one ("Ignoring event from non-current ScriptRunner"). The browser then never gets the end of
   that run: a student's acknowledgement ("Answer B received") while the answer was stored, or
   the run that drew the teacher's new step while the server counted it as drawn (so the page
   stayed on the old step), or the message that sets the page's 1-s timer again (issue 47's runs:
   3 of 100 and 6 of 250 stored answers never confirmed to their student). Here such a request
   waits behind the callbacks already queued (``call_soon``): every event of the finished run is
   queued before its runner reports STOP, so they all go out first, in order. Only a request
   handled on the session's event loop (every browser request is) waits; one from another thread
   (a development server's file watcher) and any request while a run is going on are handled at
   once, as Streamlit handles them.
2. **The theme part of each run's first message is built once.** Every run, each 1-s tick of a
   ``run_every`` fragment included, starts with a ``new_session`` message whose theme Streamlit
   builds from its configuration six times over (``_populate_theme_msg``, which walks every
   config option each time): 14 % of an app process's samples with 150 students following. The
   theme comes from the configuration alone, which Streamlit parses once, when the server starts
   (a new parse makes a new options table: the cache keeps the table each entry was built from and
   builds again for another one), so the result is kept per section.
3. **A run's messages wake the event loop once per batch.** Each message a script thread sends is
   a callback for the event loop, and each callback wrote a byte to the loop's self-pipe to wake
   it: 21 % of a busy process's samples were in that write (``_write_to_self``), 150 threads
   taking turns. Here a session's callbacks wait in its own queue and one wake-up takes all
   that are there, in the order sent; a callback that raises is logged and the rest still run, as
   the event loop runs its callbacks.
4. **A timer's tick from the page the browser has just left reruns nothing.** A page's
   ``run_every`` fragment (the class panel's live count and poll, every second) ticks in the
   browser until the browser has seen the next full run start. When that run switches pages on the
   server (``st.switch_page``: the class panel's "Presenter mode"), a tick sent just before the
   browser saw it can reach the server while the new page's run is going on. Streamlit takes it
   (the old page's fragment is dropped only at the end of that run), queues it, and once the new
   page is drawn runs it as a fragment run of the old page: the fragment is gone by then and
   nothing is drawn, but the run's first message names the old page, and Streamlit's frontend
   clears everything it shows when a run names another page than its own. The projector went
   blank, with no timer left to redraw it, until the teacher reloaded (tests/browser/
   test_class_browser.py failed so once in a CI run on two busy cores; the order of events was
   reproduced at protocol level and in Chromium, see tests/test_server_fixes.py). Here a
   fragment's rerun that names a page other than the session's current one is dropped, as
   Streamlit drops one for a fragment it no longer holds.

5. **A message's hash is computed without letting go of the interpreter lock.** Streamlit hashes
   every message a run sends (``populate_hash_if_needed``: the browser keeps large ones and is sent
   a reference next time). Python's hashlib lets go of the lock while it hashes a buffer of 2048
   bytes or more, and taking it back means waiting for the other threads of the process; with
   150 students' runs at once (a class's step change) and the machine's cores busy, a run waited
   there for a third of its time (py-spy with idle threads, 300 students; bench/RESULTS.md). Here
   the same hash (BLAKE2b, so the same digest) is fed in pieces of 2047 bytes, which hashlib
   hashes holding the lock: a few microseconds each, about 0.1 ms for a 100 KB chart.
6. **A run's id without a system call.** Each run (each tick of a ``run_every`` fragment too) gets
   a random id from ``uuid.uuid4()``, which reads the system's random source and lets go of the
   lock meanwhile: 9 % of the same runs' time. The id only tells one run's messages from another's
   (it is no secret and no key), so here it comes from a generator seeded once per process from
   the system's random source.

7. **The option read for every message is read without the configuration's lock.** For each
   message a run sends, Streamlit's ``populate_hash_if_needed`` reads
   ``global.minCachedMessageSize`` through ``config.get_option``, which takes the configuration's
   lock (a ``threading.RLock``) to find the options table. 150 students' runs at once take turns at
   that lock: 10 % of an app process's samples at 300 students were threads waiting there (py-spy,
   bench/RESULTS.md). Here that one read, in that one module, takes the option from the table
   Streamlit has parsed, without the lock; every other read, and every module's other use of the
   configuration, goes through Streamlit as before. Measured alone, it did not lower the share of
   samples waiting at that lock: the waits moved to the other callers (save_for_app_testing, the
   run's start), about 10 % again; it stays because it takes one lock per message off the runs.
   Streamlit builds a new table only when it parses the configuration again, at start and when a config file changes while its file
   watcher runs (it does not: ``server.fileWatcherType = "none"``); a read during such a parse would
   find the option's default, and the app sets no other value for it.

8. **A fragment run that ended still says so when the next run starts before it is sent.** When a
   run starts, Streamlit clears the session's queue of messages not yet sent to the browser, and
   marks every ``script_finished`` still in it as "finished early for rerun", a fragment run's
   successful end included, even when the new run is another fragment's and drops none of the
   queued messages. The browser then keeps the elements the finished run did not draw again
   (shown faded) until that fragment's next successful run. The class bell reruns a student page's
   live part (attention_ui/classroom/ring.py); its watcher's tick or a poll answer arriving during
   that run started the next run at once, and at 300 students most pages kept the last step's
   leftovers and ended each such run "early" (the bench counted 359 steps as never shown). Here,
   when a fragment run's start drops none of the queued messages, a queued "fragment run finished
   successfully" stays as it is: every message of that run goes out, in order, before the next
   run's. When the start does drop some (the new run redraws a fragment the queued messages drew),
   Streamlit's own marking stands.

Another change, at most two joined students' script runs at once per process, was taken out: no
recorded figure showed it helping, and bench/student_slots.py showed 150 runs finishing later behind
two slots than all at once, with the event loop not starved to seconds either way; a student's run
that waited on the store would also have held up every student of its process.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections import deque

_LOG = logging.getLogger(__name__)
_INSTALLED: dict[str, bool] = {}


def _assigns(cls, *names: str) -> bool:
    """Whether ``cls.__init__`` sets these attributes (instance attributes have no class-level name to
    look up: this is how an installer sees that a Streamlit still keeps what it reads)."""
    code = getattr(getattr(cls, "__init__", None), "__code__", None)
    return code is not None and set(names) <= set(code.co_names)


def _on_loop(loop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:  # no loop runs in this thread
        return False


def _install_deferred_rerun(session_class=None, runner_class=None) -> bool:
    """On ``session_class`` (Streamlit's AppSession; a test passes stand-ins with the same names)."""
    from streamlit.runtime import app_session
    from streamlit.runtime.scriptrunner import script_runner
    from streamlit.runtime.scriptrunner_utils.script_requests import ScriptRequests, ScriptRequestType

    session_class = session_class or app_session.AppSession
    runner_class = runner_class or script_runner.ScriptRunner
    original = session_class.request_rerun
    if "deferred_rerun" in getattr(original, "_attention_lab_fixes", ()):
        return True
    if not (
        _assigns(session_class, "_scriptrunner", "_event_loop")
        and _assigns(runner_class, "_requests")
        and _assigns(ScriptRequests, "_state")
    ):
        return False

    def finished(runner) -> bool:
        requests = getattr(runner, "_requests", None)
        return getattr(requests, "_state", None) == ScriptRequestType.STOP

    def request_rerun(self, client_state=None, *, _deferred: bool = False) -> None:
        runner = getattr(self, "_scriptrunner", None)
        loop = getattr(self, "_event_loop", None)
        if not _deferred and runner is not None and finished(runner) and _on_loop(loop):
            # Its run's messages are callbacks on this loop already: let them go out first.
            loop.call_soon(lambda: request_rerun(self, client_state, _deferred=True))
            return
        original(self, client_state)

    request_rerun._attention_lab = True
    request_rerun._attention_lab_fixes = (*getattr(original, "_attention_lab_fixes", ()), "deferred_rerun")
    request_rerun.__wrapped__ = original
    session_class.request_rerun = request_rerun
    return True


def _install_same_page_fragments(session_class=None) -> bool:
    """On ``session_class`` (Streamlit's AppSession; a test passes a stand-in with the same names): a
    rerun of a fragment that names a page other than the session's current one is dropped."""
    from streamlit.runtime import app_session
    from streamlit.runtime.pages_manager import PagesManager

    session_class = session_class or app_session.AppSession
    original = session_class.request_rerun
    if "same_page_fragments" in getattr(original, "_attention_lab_fixes", ()):
        return True
    if not (
        _assigns(session_class, "_pages_manager")
        and isinstance(getattr(PagesManager, "current_page_script_hash", None), property)
    ):
        return False

    def request_rerun(self, client_state=None) -> None:
        if client_state is not None and other_page_fragment(self, client_state):
            _LOG.info("attention_ui.server_fixes: a tick of fragment %s from the page the browser left "
                      "is dropped", client_state.fragment_id)  # fmt: skip
            return
        original(self, client_state)

    request_rerun._attention_lab = True
    request_rerun._attention_lab_fixes = (
        *getattr(original, "_attention_lab_fixes", ()),
        "same_page_fragments",
    )
    request_rerun.__wrapped__ = original  # the deferral's wrapper, then Streamlit's own
    session_class.request_rerun = request_rerun
    return True


def other_page_fragment(session, client_state) -> bool:
    """Whether ``client_state`` asks for a fragment's rerun on a page other than the one ``session``
    is on now (the page its last run started, or the one its run in progress switched to). A
    request that names no page (a page's first run names it by its path) is never dropped."""
    fragment = getattr(client_state, "fragment_id", "")
    asked = getattr(client_state, "page_script_hash", "")
    now = getattr(getattr(session, "_pages_manager", None), "current_page_script_hash", "")
    return bool(fragment and asked and now and asked != now)


def _install_theme_cache() -> bool:
    from streamlit import config
    from streamlit.runtime import app_session

    original = getattr(app_session, "_populate_theme_msg", None)
    if original is None or getattr(original, "_attention_lab", False):
        return original is not None
    cache: dict[str, tuple[object, bytes]] = {}  # section -> (the options table it was built from, bytes)

    def populate(msg, section: str = "theme") -> None:
        options = getattr(config, "_config_options", None)
        hit = cache.get(section)
        if options is None:  # not parsed yet: nothing to keep
            original(msg, section)
            return
        if hit is None or hit[0] is not options:  # (the table is held, so its identity cannot be reused)
            fresh = type(msg)()
            original(fresh, section)
            hit = cache[section] = (options, fresh.SerializeToString())
        msg.MergeFromString(hit[1])

    populate._attention_lab = True
    populate.__wrapped__ = original  # Streamlit's own, for the test that compares them
    app_session._populate_theme_msg = populate
    return True


def _install_batched_wakeups(session_class=None) -> bool:
    """A script thread's events reach the event loop in batches: one wake-up of the loop (a write to
    its self-pipe) per batch instead of one per message, the events handled in the order sent."""
    from streamlit.runtime import app_session

    session_class = session_class or app_session.AppSession
    original = session_class._call_soon_on_event_loop
    if getattr(original, "_attention_lab", False):
        return True
    if not _assigns(session_class, "_event_loop"):
        return False

    def call_soon(self, callback) -> None:
        state = self.__dict__.get("_al_batch")
        if state is None:
            state = self.__dict__.setdefault("_al_batch", [threading.Lock(), deque(), False])
        lock, pending = state[0], state[1]
        with lock:
            pending.append(callback)
            if state[2]:
                return  # a drain is already on its way: it takes this one too
            state[2] = True

        def drain() -> None:
            with lock:
                n = len(pending)  # the events queued now; later ones get their own wake-up
            for _ in range(n):
                with lock:
                    event = pending.popleft()
                try:
                    event()
                except Exception:  # the loop would log it and run the next callback: so do we
                    _LOG.exception("attention_ui.server_fixes: a session's event-loop callback failed")
            with lock:
                if not pending:
                    state[2] = False
                    return
            original(self, drain)

        try:
            original(self, drain)
        except Exception:
            with lock:
                state[2] = False
            raise

    call_soon._attention_lab = True
    session_class._call_soon_on_event_loop = call_soon
    return True


HASH_PIECE = 2047  # hashlib lets go of the interpreter lock for one update of 2048 bytes or more


def _install_hash_holding_lock(util_module=None) -> bool:
    """On ``util_module`` (streamlit.util; a test passes a stand-in): ``calc_hash`` feeds its hasher
    pieces of HASH_PIECE bytes; the digest is the same."""
    from streamlit import util

    util_module = util_module or util
    original = util_module.calc_hash
    if getattr(original, "_attention_lab", False):
        return True
    if not callable(getattr(util_module, "create_fast_hasher", None)):
        return False

    def calc_hash(s: bytes | str) -> str:
        data = memoryview(s.encode("utf-8") if isinstance(s, str) else s)
        hasher = util_module.create_fast_hasher()
        for start in range(0, len(data), HASH_PIECE):
            hasher.update(data[start : start + HASH_PIECE])
        return hasher.hexdigest()

    calc_hash._attention_lab = True
    calc_hash.__wrapped__ = original
    util_module.calc_hash = calc_hash
    return True


def _install_run_ids(module=None) -> bool:
    """On ``module`` (Streamlit's run_descriptor; a test passes a stand-in): a run's id from a
    generator seeded once per process."""
    import random
    import uuid

    from streamlit.runtime.scriptrunner_utils import run_descriptor

    module = module or run_descriptor
    original = getattr(module, "_generate_scriptrun_id", None)
    if original is None:
        return False
    if getattr(original, "_attention_lab", False):
        return True
    ids = random.Random(os.urandom(32))  # noqa: S311 - an id that only has to differ, no secret

    def _generate_scriptrun_id() -> str:
        return str(uuid.UUID(int=ids.getrandbits(128), version=4))

    _generate_scriptrun_id._attention_lab = True
    _generate_scriptrun_id.__wrapped__ = original
    module._generate_scriptrun_id = _generate_scriptrun_id
    return True


CACHED_SIZE_OPTION = "global.minCachedMessageSize"  # read for every message a run sends


class _MessageCacheConfig:
    """``streamlit.config`` as seen by Streamlit's forward_msg_cache: the one option it reads for
    every message without the configuration's lock; every other name is the module's own."""

    def __init__(self, config) -> None:
        self._config = config

    def get_option(self, key: str):
        if key == CACHED_SIZE_OPTION:
            options = self._config._config_options
            option = options.get(key) if options else None
            if option is not None:
                return option.value
        return self._config.get_option(key)

    def __getattr__(self, name: str):
        return getattr(self._config, name)


def _install_unlocked_size_option(cache_module=None) -> bool:
    """On ``cache_module`` (Streamlit's forward_msg_cache; a test passes a stand-in): its ``config``
    is a :class:`_MessageCacheConfig` over the real one."""
    from streamlit.runtime import forward_msg_cache

    cache_module = cache_module or forward_msg_cache
    config = getattr(cache_module, "config", None)
    if isinstance(config, _MessageCacheConfig):
        return True
    if (
        config is None
        or not hasattr(config, "_config_options")
        or not callable(getattr(config, "get_option", None))
    ):
        return False
    cache_module.config = _MessageCacheConfig(config)
    return True


def _install_finished_fragment_runs(queue_class=None) -> bool:
    """On ``queue_class`` (Streamlit's ForwardMsgQueue; a test passes a stand-in with the same names): a
    fragment run's FINISHED_FRAGMENT_RUN_SUCCESSFULLY stays so when the next run starts while it is
    still queued and that start drops none of the queued messages."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
    from streamlit.runtime.forward_msg_queue import ForwardMsgQueue

    queue_class = queue_class or ForwardMsgQueue
    original = queue_class.clear
    if getattr(original, "_attention_lab", False):
        return True
    if not _assigns(queue_class, "_queue"):
        return False
    done = ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY

    def clear(self, retain_lifecycle_msgs: bool = False, fragment_ids_this_run=None) -> None:
        if not retain_lifecycle_msgs or fragment_ids_this_run is None:
            original(self, retain_lifecycle_msgs, fragment_ids_this_run)
            return
        queued = len(self._queue)
        ended = [
            m for m in self._queue if m.WhichOneof("type") == "script_finished" and m.script_finished == done
        ]
        original(self, retain_lifecycle_msgs, fragment_ids_this_run)
        if len(self._queue) == queued:  # every message of the finished run still goes out, in order
            for msg in ended:
                msg.script_finished = done

    clear._attention_lab = True
    clear.__wrapped__ = original
    queue_class.clear = clear
    return True


# Installed in this order: the page check wraps the deferral, so a tick is checked when it arrives.
FIXES = {"deferred_rerun": _install_deferred_rerun, "theme_cache": _install_theme_cache,
         "batched_wakeups": _install_batched_wakeups,
         "same_page_fragments": _install_same_page_fragments, "hash_holding_lock": _install_hash_holding_lock,
         "run_ids": _install_run_ids, "unlocked_size_option": _install_unlocked_size_option,
         "finished_fragment_runs": _install_finished_fragment_runs}  # fmt: skip
ENV = "ATTENTION_LAB_SERVER_FIXES"  # for A/B runs of the bench only: a comma-separated subset, or "none"


def install() -> dict[str, bool]:
    """Install the fixes (once per process); returns which are installed. A Streamlit whose private
    names differ keeps its own behaviour, said once in the server log."""
    if _INSTALLED:
        return dict(_INSTALLED)
    chosen = os.environ.get(ENV)
    wanted = set(FIXES) if chosen is None else {x.strip() for x in chosen.split(",")}
    for name, step in FIXES.items():
        if name not in wanted:
            _INSTALLED[name] = False
            continue
        try:
            _INSTALLED[name] = bool(step())
        except Exception as exc:  # noqa: BLE001 - another Streamlit: the app runs as Streamlit made it
            _INSTALLED[name] = False
            _LOG.warning("attention_ui.server_fixes: %s not installed (%r)", name, exc)
        else:
            if not _INSTALLED[name]:
                _LOG.warning("attention_ui.server_fixes: %s not installed (Streamlit's names differ)", name)
    return dict(_INSTALLED)
