"""Authentication (PasswordAuthenticator, roles): not implemented yet."""

import pytest


@pytest.mark.skip(reason="authentication (PasswordAuthenticator, CREATE/ALTER/DROP ROLE) is not implemented yet; "
                         "issue 4 item 5 — enable when `cairn serve` can start with authenticator enabled")
def test_password_authenticator():
    pass
