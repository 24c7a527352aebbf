"""Small helpers shared by the test modules."""

import re
import subprocess

import pytest

from conftest import cairn_bin


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
    """The server's error message text. Errors the driver re-raises as its own classes
    (InvalidRequest, Unauthorized, ...) keep it only inside 'Error from server: code=... message="..."';
    protocol-level ones (SyntaxException, ConfigurationException) have it in .message."""
    text = str(err)
    m = re.search(r'message="(.*)">?$', text, re.S)
    if m:
        return m.group(1)
    return getattr(err, "message", None) or text


def server_code(err):
    """The protocol error code the server sent (e.g. 0x2200)."""
    code = getattr(err, "code", None)
    if code is not None:
        return code
    m = re.search(r"code=([0-9a-fA-F]{4})", str(err))
    return int(m.group(1), 16) if m else None


def nodetool(node, *args, ok=True):
    """Runs `cairn nodetool` against node; with ok, asserts it succeeded."""
    out = subprocess.run([str(cairn_bin()), "nodetool", "-p", str(node.api_port), *args],
                         capture_output=True, text=True, timeout=120)
    if ok:
        assert out.returncode == 0, out.stderr
    return out
