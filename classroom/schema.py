"""The store's tables, as numbered migrations applied once each, in order.

One SQL text serves SQLite and PostgreSQL (types both accept, constraints both enforce). The
rules that matter are constraints here, not only checks in the code: one answer per student per
poll (the answers' primary key), at most one open poll per session (a partial unique index), an
answer only from a student of the poll's session (a foreign key).
"""

from __future__ import annotations

MIGRATIONS: tuple[tuple[int, tuple[str, ...]], ...] = (
    (
        1,
        (
            """CREATE TABLE sessions (
                id TEXT PRIMARY KEY,
                code TEXT NOT NULL UNIQUE,
                teacher_hash TEXT NOT NULL,
                created_at DOUBLE PRECISION NOT NULL,
                expires_at DOUBLE PRECISION NOT NULL,
                ended_at DOUBLE PRECISION,
                join_url TEXT,
                view_json TEXT NOT NULL DEFAULT '{}',
                view_rev INTEGER NOT NULL DEFAULT 0
            )""",
            """CREATE TABLE students (
                session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
                student_hash TEXT NOT NULL,
                nickname TEXT,
                joined_at DOUBLE PRECISION NOT NULL,
                PRIMARY KEY (session_id, student_hash)
            )""",
            """CREATE TABLE polls (
                id TEXT PRIMARY KEY,
                session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
                seq INTEGER NOT NULL,
                step INTEGER NOT NULL,
                question_json TEXT NOT NULL,
                n_choices INTEGER NOT NULL CHECK (n_choices BETWEEN 2 AND 8),
                correct INTEGER NOT NULL CHECK (correct >= 0 AND correct < n_choices),
                state TEXT NOT NULL CHECK (state IN ('open', 'closed', 'revealed')),
                opened_at DOUBLE PRECISION NOT NULL,
                closed_at DOUBLE PRECISION,
                UNIQUE (session_id, seq)
            )""",
            """CREATE TABLE answers (
                poll_id TEXT NOT NULL REFERENCES polls (id) ON DELETE CASCADE,
                session_id TEXT NOT NULL,
                student_hash TEXT NOT NULL,
                choice INTEGER NOT NULL CHECK (choice >= 0),
                answered_at DOUBLE PRECISION NOT NULL,
                PRIMARY KEY (poll_id, student_hash),
                FOREIGN KEY (session_id, student_hash)
                    REFERENCES students (session_id, student_hash) ON DELETE CASCADE
            )""",
            "CREATE TABLE join_failures (client_key TEXT NOT NULL, at DOUBLE PRECISION NOT NULL)",
        ),
    ),
    (
        2,
        (
            "CREATE UNIQUE INDEX polls_one_open ON polls (session_id) WHERE state = 'open'",
            "CREATE INDEX join_failures_client ON join_failures (client_key, at)",
            "CREATE INDEX answers_session ON answers (session_id)",
        ),
    ),
    (
        3,
        (
            # Issue 34: who a join or a start came from, as salted hashes (never the address itself),
            # so joins per address and starts per address can be limited and the panel can say how
            # many identities share an address; and the teacher's "one vote per device".
            "ALTER TABLE students ADD COLUMN client_hash TEXT",
            "ALTER TABLE students ADD COLUMN device_hash TEXT",
            "ALTER TABLE sessions ADD COLUMN creator_hash TEXT",
            "ALTER TABLE sessions ADD COLUMN one_per_device INTEGER NOT NULL DEFAULT 0",
            "CREATE INDEX students_client ON students (session_id, client_hash)",
            "CREATE INDEX sessions_creator ON sessions (creator_hash, created_at)",
            "CREATE INDEX join_failures_at ON join_failures (at)",
        ),
    ),
    (
        4,
        # when each student's page last said it was open (the teacher's count of students seen in
        # the last minute; a count of every identity ever made said 5 for 3 people)
        ("ALTER TABLE students ADD COLUMN seen_at DOUBLE PRECISION",),
    ),
    (
        5,
        # Issue 42: the UTS #39 skeleton of each nickname (classroom.model.nickname_skeleton). Two
        # students of a class may not have nicknames that look alike ("Alice" and Cyrillic "Аlice");
        # the join checks first and says so, and this index holds it as a rule. No nickname: NULL,
        # which both databases let repeat.
        (
            "ALTER TABLE students ADD COLUMN nickname_skeleton TEXT",
            "CREATE UNIQUE INDEX students_nickname_skeleton ON students (session_id, nickname_skeleton)",
        ),
    ),
)
LATEST = MIGRATIONS[-1][0]
