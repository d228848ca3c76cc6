"""The shared store's URL is a secret: `mask` hides its passwords in any text, however the
text spells them, and `where` names the store by host and database alone. Pure: libpq's
own words, as it prints them, are the inputs here; tests/store/test_store_url_secret.py
runs real libpq and real gitpub commands against bad URLs."""

from __future__ import annotations

import random
import string
from urllib.parse import quote, unquote

import pytest

from gitpub.store.url import mask, where

PASSWORD = "Kq7%zR9vLm2xW4"


def test_libpqs_words_about_an_unencoded_percent_are_masked() -> None:
    url = f"postgresql://gitpub:{PASSWORD}@db.example.invalid:5432/gitpub"
    said = f'invalid percent-encoded token: "{PASSWORD}"'
    assert PASSWORD not in mask(said, url)
    assert mask(said, url) == 'invalid percent-encoded token: "***"'


def test_a_whole_url_quoted_back_keeps_everything_but_its_password() -> None:
    url = "postgresql://gitpub:Sup3rSecretPw@[db.example.invalid:5432/gitpub"
    said = (
        f'end of string reached when looking for matching "]" in IPv6 host address in URI: "{url}"'
    )
    masked = mask(said, url)
    assert "Sup3rSecretPw" not in masked
    assert 'URI: "postgresql://gitpub:***@[db.example.invalid:5432/gitpub"' in masked


def test_query_string_credentials_are_masked_by_name_and_by_value() -> None:
    url = (
        "postgresql://gitpub@db.example.invalid/gitpub?sslmode=require"
        "&password=Qw3rtyQw3rty&sslpassword=K3yPassphrase&oauth_client_secret=Cl13ntS3cret"
    )
    for secret in ("Qw3rtyQw3rty", "K3yPassphrase", "Cl13ntS3cret"):
        assert secret not in mask(f"libpq said {url} and then {secret}", url)
    # libpq's key=value spelling, in a message about some other URL: masked by its key.
    said = "connection info: host=db password='two words' sslpassword=abc"
    assert mask(said, None) == "connection info: host=db password=*** sslpassword=***"


def test_a_password_split_by_a_parser_is_masked_in_its_pieces() -> None:
    """An unencoded `/` ends the user part for libpq, which then reads the first half of the
    password as the host's port and the second as the path."""
    url = "postgresql://gitpub:Kq7zR9v/Lm2xW4@host/gitpub"
    said = 'invalid port number: "Kq7zR9v" for host "gitpub"; database "Lm2xW4@host/gitpub"'
    masked = mask(said, url)
    assert "Kq7zR9v" not in masked and "Lm2xW4" not in masked


_ALPHABET = string.ascii_letters + string.digits + "%@/:?#&=+!$'()*,;[]~-._"


def _passwords(count: int) -> list[str]:
    rng = random.Random(35)
    return ["".join(rng.choice(_ALPHABET) for _ in range(rng.randint(8, 24))) for _ in range(count)]


def _partly_decoded(encoded: str, rng: random.Random) -> str:
    """`encoded` with a random half of its %XX escapes decoded, as a parser that stopped
    midway would show it."""
    out, i = [], 0
    while i < len(encoded):
        if encoded[i] == "%" and rng.random() < 0.5:
            out.append(unquote(encoded[i : i + 3]))
            i += 3
        else:
            out.append(encoded[i])
            i += 1
    return "".join(out)


@pytest.mark.parametrize("password", _passwords(200))
def test_no_spelling_of_a_password_survives(password: str) -> None:
    rng = random.Random(password)
    encoded = quote(password, safe="")
    for written in (password, encoded):
        url = f"postgresql://gitpub:{written}@db.example.invalid:5432/gitpub?sslmode=require"
        spellings = {written, unquote(written), _partly_decoded(written, rng), url}
        text = " | ".join(f'libpq: "{s}"' for s in spellings)
        masked = mask(text, url)
        for shown in (password, encoded, unquote(written)):
            if len(shown) >= 4:
                assert shown not in masked, (url, masked)


@pytest.mark.parametrize(
    ("url", "named"),
    [
        (
            "postgresql://gitpub:pw-0f-some-length@db.example.com:6432/blogs",
            "database blogs on db.example.com:6432",
        ),
        (
            "postgresql://gitpub:pw-0f-some-length@db.example.com/blogs",
            "database blogs on db.example.com",
        ),
        (
            "postgresql:///gitpub?host=%2Ftmp%2Fpg&user=postgres",
            "database gitpub on the socket in /tmp/pg",
        ),
        ("postgres://u:pw-0f-some-length@[2001:db8::1]:5433/x", "database x on [2001:db8::1]:5433"),
        ("postgresql://u:pw-0f-some-length@h/?dbname=other", "database other on h"),
        ("postgresql://", "database (libpq's default) on the local socket"),
    ],
)
def test_a_store_is_named_by_host_and_database_alone(url: str, named: str) -> None:
    assert where(url) == named


def test_naming_a_store_whose_url_does_not_parse_shows_no_password() -> None:
    url = "postgresql://gitpub:half/of@it@[db.example.invalid/gitpub"
    assert "half" not in where(url) and "of@it" not in where(url)
