"""Wrong tokens on the Vote page get slower and slower, per session and per client; real voters do not."""

from __future__ import annotations

from contextlib import closing

import pytest

import pages._vote_parts as vote_parts
from core.campaign import throttle
from core.campaign.throttle import FIRST_DELAY_S, FORGET_AFTER_S, FREE_FAILURES, MAX_DELAY_S, Failures, delay_after
from core.store.connection import connect
from tests.test_app_data import run
from tests.test_app_vote import app, campaign_tokens, choose, fixed_tokens, vote_page  # noqa: F401 - fixtures

NOW = 1_800_000_000.0


@pytest.fixture
def clock(monkeypatch):
    """The throttle's clock, moved by the test instead of sleeping."""
    time = {"now": NOW}
    monkeypatch.setattr(throttle, "clock", lambda: time["now"])
    return time


def set_client(monkeypatch, address: str | None) -> None:
    monkeypatch.setattr(vote_parts, "client", lambda: throttle.client_id(address, {}))


def enter(at, token: str):
    at.text_input(key="vote_token").set_value(token)
    return run(at)


def errors(at) -> str:
    return " ".join(e.value for e in at.error)


# -- the rules -------------------------------------------------------------------------------------
def test_the_delay_is_free_then_doubles_up_to_a_cap():
    assert [delay_after(n) for n in range(FREE_FAILURES)] == [0.0] * FREE_FAILURES
    assert [delay_after(FREE_FAILURES + k) for k in range(4)] == [FIRST_DELAY_S * 2 ** k for k in range(4)]
    assert delay_after(200) == MAX_DELAY_S


def test_failures_wait_and_are_forgotten_after_a_quiet_day():
    failures = Failures()
    for k in range(FREE_FAILURES):
        assert failures.wait(NOW + k) == 0
        failures = failures.failed(NOW + k)
    last = NOW + FREE_FAILURES - 1
    assert failures.wait(last) == FIRST_DELAY_S and failures.wait(last + FIRST_DELAY_S) == 0
    assert failures.failed(last + FORGET_AFTER_S).count == 1


@pytest.mark.parametrize("address, headers, same_as", [
    ("203.0.113.7", {}, "203.0.113.7"),
    ("203.0.113.7", {"X-Forwarded-For": "198.51.100.1"}, "203.0.113.7"),  # a direct peer's header is ignored
    (None, {"X-Forwarded-For": "10.9.9.9, 198.51.100.1"}, "198.51.100.1"),  # the local proxy's own entry
    (None, {"x-real-ip": "198.51.100.2"}, "198.51.100.2"),
])
def test_the_client_is_the_address_the_request_came_from(address, headers, same_as):
    key = throttle.client_id(address, headers)
    assert key == throttle.client_id(same_as, {}) and same_as not in key


@pytest.mark.parametrize("address, headers", [(None, {}), (None, {"X-Forwarded-For": "not an address"})])
def test_an_unknown_client_is_none(address, headers):
    assert throttle.client_id(address, headers) is None


# -- the Vote page ---------------------------------------------------------------------------------
def test_repeated_wrong_tokens_wait_longer_and_longer(app, campaign_tokens, clock, monkeypatch):
    set_client(monkeypatch, None)  # no known client: the session alone counts
    _, _, (token, _) = campaign_tokens
    at = vote_page()
    for k in range(FREE_FAILURES):
        at = enter(at, f"guess-{k}")
        assert "not valid" in errors(at)
    for k in range(40):  # 40 quick guesses: none is even checked
        at = enter(at, f"fast-guess-{k}")
        assert "Try again in 2 s" in errors(at)
    at = enter(at, token)  # even the right token waits: checking it would leave guessing as fast as before
    assert "Try again in 2 s" in errors(at) and not at.main.radio
    clock["now"] += FIRST_DELAY_S
    at = enter(at, "one-more-guess")
    assert "not valid" in errors(at)
    at = enter(at, token)
    assert "Try again in 4 s" in errors(at)  # the wait doubled
    clock["now"] += 4
    at = enter(at, token)
    assert not at.error and at.main.radio


def test_a_new_session_from_the_same_client_keeps_waiting(app, campaign_tokens, clock, monkeypatch, db_path):
    _, _, (token, _) = campaign_tokens
    set_client(monkeypatch, "203.0.113.7")
    at = vote_page()
    for k in range(FREE_FAILURES):
        at = enter(at, f"guess-{k}")
    fresh = vote_page("fresh-session-guess")  # a reload or a script opening new sessions
    assert "Try again in 2 s" in errors(fresh)
    with closing(connect(db_path)) as conn:
        (stored,) = conn.execute("SELECT client, failures FROM campaign_token_failures").fetchall()
    assert stored[1] == FREE_FAILURES and "203.0.113.7" not in stored[0]  # only a hash of the address
    set_client(monkeypatch, "198.51.100.1")
    other = vote_page(token)  # another client is not slowed
    assert not other.error and other.main.radio


def test_a_voter_already_in_is_never_slowed(app, campaign_tokens, clock, monkeypatch):
    _, _, (token, _) = campaign_tokens
    set_client(monkeypatch, "203.0.113.7")
    at = vote_page(token)
    assert at.main.radio
    guesser = vote_page()  # someone else on the same network guesses
    for k in range(FREE_FAILURES + 3):
        guesser = enter(guesser, f"guess-{k}")
    for choice in ("A", "B", "Tie"):  # the voter's session goes on at full speed
        at = choose(at, choice, choice)
        assert not at.error
    assert "3 / 4 done" in at.main.get("progress")[0].proto.text


def test_a_wrong_token_left_in_the_box_counts_once(app, campaign_tokens, clock, monkeypatch):
    set_client(monkeypatch, "203.0.113.7")
    at = enter(vote_page(), "typo")
    for _ in range(FREE_FAILURES + 2):
        at = run(at)  # any rerun (a click elsewhere) with the same wrong token still typed
        assert "not valid" in errors(at)
    assert "not valid" in errors(enter(at, "another-typo"))  # 2 failures so far: no wait yet
