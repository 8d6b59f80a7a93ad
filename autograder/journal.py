"""The grading service's journal: every entry students put in the exchange, from accepted to done.

It is a table of the gradebook's own database (`attnlab_service`), so that recording a grade and
noting that it was recorded are one transaction: a service killed at any moment records nothing
twice and loses nothing. An entry moves

    accepted -> collecting -> grading -> recorded -> done

and may stop at held (the attempt limit: accepted again at `not_before`), late (left for
`attnlab grade`), superseded (a newer entry of the student was collected), refused (not
collected, with why) or failed (a failure that was not the student's, again and again). After a
crash the service puts each unfinished entry back where its work can be redone (service.py).
"""
import time

from sqlalchemy import Column, Float, Integer, MetaData, String, Table, Text, UniqueConstraint, create_engine, \
    insert, select, update

_METADATA = MetaData()
ENTRIES = Table(
    "attnlab_service", _METADATA,
    Column("id", Integer, primary_key=True),
    Column("assignment", String(128), nullable=False),
    Column("student", String(128), nullable=False),
    Column("entry", String(1024), nullable=False),      # its folder's name in the exchange's inbound
    Column("state", String(16), nullable=False),
    Column("seen", Float, nullable=False),               # when it was accepted (seconds since the epoch)
    Column("started", Float),                            # when its grading began: an attempt
    Column("not_before", Float),                         # held until then
    Column("tries", Integer, nullable=False, default=0),  # gradings the grader failed on
    Column("outcome", Text),                             # the log line's verdict
    UniqueConstraint("assignment", "entry"),
)
OPEN = ("accepted", "held")


class Journal:
    def __init__(self, db_url: str):
        # a writer that holds the database (`attnlab grade`, formgrader) is waited for, not failed on
        self.engine = create_engine(db_url, connect_args={"timeout": 60} if db_url.startswith("sqlite") else {})
        _METADATA.create_all(self.engine)

    def close(self) -> None:
        self.engine.dispose()

    def known(self, assignment: str) -> set:
        with self.engine.connect() as db:
            return set(db.scalars(select(ENTRIES.c.entry).where(ENTRIES.c.assignment == assignment)))

    def accept(self, assignment: str, entries: list) -> None:
        """`entries`: [(student, entry name)] new in the exchange."""
        if entries:
            with self.engine.begin() as db:
                db.execute(insert(ENTRIES), [{"assignment": assignment, "student": s, "entry": e, "state": "accepted",
                                              "seen": time.time(), "tries": 0} for s, e in entries])

    def rows(self, assignment: str, states, student: str | None = None) -> list:
        query = select(ENTRIES).where(ENTRIES.c.assignment == assignment, ENTRIES.c.state.in_(states))
        if student is not None:
            query = query.where(ENTRIES.c.student == student)
        with self.engine.connect() as db:
            return list(db.execute(query.order_by(ENTRIES.c.seen, ENTRIES.c.id)))

    def row(self, row_id: int):
        with self.engine.connect() as db:
            return db.execute(select(ENTRIES).where(ENTRIES.c.id == row_id)).one()

    def set(self, ids, state: str, **values) -> None:
        with self.engine.begin() as db:
            self.update(db, ids, state, **values)

    @staticmethod
    def update(db, ids, state: str, **values) -> None:
        """Within `db`'s transaction (the gradebook's, when a grade is recorded)."""
        db.execute(update(ENTRIES).where(ENTRIES.c.id.in_(list(ids))).values(state=state, **values))

    def attempts(self, assignment: str, student: str, since: float) -> list:
        """When the gradings of `student` since `since` began, oldest first."""
        query = select(ENTRIES.c.started).where(ENTRIES.c.assignment == assignment, ENTRIES.c.student == student,
                                                ENTRIES.c.started >= since).order_by(ENTRIES.c.started)
        with self.engine.connect() as db:
            return list(db.scalars(query))
