"""The teacher's count of students is the students seen in the last minute (issue 34 point 9): three
people who made five identities (a reload in another browser, a second tab) count three while their
pages are open, and nobody once they have all closed them. Both stores."""

from __future__ import annotations

from tests.class_stores import (  # noqa: F401  (fixtures used by name)
    fixture_postgres_server,
    fixture_postgres_store,
    fixture_store,
)

T0 = 1_800_000_000.0


def test_students_seen_in_the_last_minute(store):
    cls = store.start_session(now=T0)
    joined = [store.join(cls.code, None, f"c{i}", now=T0 + i) for i in range(5)]  # 5 identities
    assert store.teacher_session(cls.session_id, cls.teacher_token).students == 5
    # 90 s later, three pages are still open (they said so 10 s ago); two were left at once
    for j in joined[2:]:
        store.seen(cls.session_id, j.student_token, now=T0 + 80)
    assert store.students_seen(cls.session_id, cls.teacher_token, within_s=60, now=T0 + 90) == 3
    # a new student counts from their join
    store.join(cls.code, None, "c9", now=T0 + 85)
    assert store.students_seen(cls.session_id, cls.teacher_token, within_s=60, now=T0 + 90) == 4
    # a minute after the last word from any page: nobody
    assert store.students_seen(cls.session_id, cls.teacher_token, within_s=60, now=T0 + 146) == 0
    # only the teacher may ask, and a forged token notes nothing
    store.seen(cls.session_id, "A" * 43, now=T0 + 146)
    assert store.students_seen(cls.session_id, cls.teacher_token, within_s=60, now=T0 + 146) == 0
