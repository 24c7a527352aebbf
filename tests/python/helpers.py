"""Small helpers shared by the test modules."""

import pytest


def rows(session, query, *args, **kw):
    return list(session.execute(query, *args, **kw))


def tuples(session, query, *args, **kw):
    return [tuple(r) for r in session.execute(query, *args, **kw)]


def expect_error(exc_class, fn, *args, **kw):
    """Runs fn, asserts it raises exc_class, returns the exception."""
    with pytest.raises(exc_class) as info:
        fn(*args, **kw)
    return info.value


def server_message(err):
    """The server's error message text (the driver keeps it in .message for server errors)."""
    return getattr(err, "message", None) or str(err)
