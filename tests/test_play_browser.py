"""The play app in a real browser (Debian's Chromium driven by Playwright; marker ``browser``,
``make test-browser``, its own CI step): a person's whole game of every game by clicks, a
watched game, a replay stepped both ways, bad requests answered with a message and the game
unharmed. One Chromium for the whole session. It also takes the docs' screenshots of each
game's table (docs/games/img/<game>.png: each game's page shows it, README the ROY one)."""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser
playwright_api = pytest.importorskip("playwright.sync_api")
pytest.importorskip("uvicorn")

from card_envs.games import GAMES  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
IMAGES = ROOT / "docs" / "games" / "img"  # docs/_hooks/game_pages.py's PICTURES
MAX_CLICKS = 2000


def chromium_path() -> str:
    found = os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which(
        "chromium-browser")
    if not found:
        pytest.fail("Chromium is not installed: make test-browser installs Debian's chromium")
    return found


@pytest.fixture(scope="session")
def server() -> Iterator[str]:
    import uvicorn

    from card_envs.play.main import bind
    from card_envs.play.server import make_app

    sock = bind("127.0.0.1", 0)
    srv = uvicorn.Server(uvicorn.Config(make_app(), log_level="warning"))
    thread = threading.Thread(target=srv.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not srv.started:
        assert time.monotonic() < deadline, "the app did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    srv.should_exit = True
    thread.join(10)


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    with playwright_api.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=chromium_path(),
                                     args=["--no-sandbox", "--disable-gpu"])
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser, server):  # a fresh context: another browser's cookies and storage
    context = browser.new_context(viewport={"width": 900, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(20_000)
    page.goto(f"{server}/?delay=0")
    page.wait_for_selector("#game option", state="attached")
    yield page
    context.close()


def setup(page, game: str, seats: list[str], seed: int = 5) -> None:
    page.select_option("#game", game)
    for seat, kind in enumerate(seats):
        page.select_option(f"#seat-{seat}", kind)
    page.fill("#seed", str(seed))


def play_by_clicks(page, game: str) -> int:
    """Click moves until the game ends: a card when one is playable, else a move's button."""
    clicks = 0
    while not page.locator("#result").inner_text():
        assert clicks < MAX_CLICKS, f"{game}: no end after {clicks} clicks"
        page.wait_for_selector("#moves button, #result:not(:empty)")
        if page.locator("#result").inner_text():
            break
        if clicks in (0, 3):  # the deal, then a few moves in if the game lasts that long
            IMAGES.mkdir(parents=True, exist_ok=True)
            page.locator("#table").screenshot(path=str(IMAGES / f"{game}.png"))
        before = page.locator("#log li").count()
        cards = page.locator("#table .playable")
        if clicks % 2 == 0 and cards.count():
            cards.first.click()
            if page.locator("#choices button").count():
                page.locator("#choices button").first.click()
        else:
            page.locator("#moves button").first.click()
        page.wait_for_function(f"document.querySelectorAll('#log li').length > {before}")
        assert not page.locator("#error").is_visible(), page.locator("#error").inner_text()
        clicks += 1
    return clicks


@pytest.mark.parametrize("game", list(GAMES))
def test_a_person_plays_a_whole_game_by_clicks(page, game: str) -> None:
    n = GAMES[game].engine_class()().num_players
    setup(page, game, ["person"] + ["random"] * (n - 1))
    page.click("#start")
    page.wait_for_selector("#game-view:not([hidden])")
    assert play_by_clicks(page, game) > 0
    assert "Game over" in page.locator("#result").inner_text()


def test_watch_a_game(page) -> None:
    setup(page, "roy", ["heuristic", "random"])
    page.fill("#speed", "0")
    page.click("#start")
    page.wait_for_selector("#watch-controls:not([hidden])")
    page.wait_for_function("document.querySelector('#result').textContent.length > 0",
                           timeout=60_000)
    assert page.locator("#log li").count() > 5


def test_replay_steps_both_ways_and_bad_requests_leave_the_game_unharmed(page, server) -> None:
    setup(page, "roy", ["person", "heuristic"])
    page.click("#start")
    page.wait_for_selector("#moves button")
    game_id = page.evaluate("state.id")
    before = page.request.get(f"{server}/api/sessions/{game_id}").json()
    legal = set(before["legal"])
    illegal = next(f"play:{r}{s}" for r in "A23456789TJQK" for s in "CDHS"
                   if f"play:{r}{s}" not in legal)
    page.evaluate(f"move({illegal!r})")  # as a tampered page would send it
    page.wait_for_selector("#error:not([hidden])")
    assert "illegal move" in page.locator("#error").inner_text()
    assert page.request.get(f"{server}/api/sessions/{game_id}").json() == before
    response = page.request.post(f"{server}/api/sessions", data={"game": "chess", "seats": []})
    assert response.status == 404 and "unknown game 'chess'" in response.json()["error"]
    assert page.request.get(f"{server}/nowhere").status == 404
    page.locator("#moves button").first.click()  # the game goes on
    page.wait_for_function("document.querySelector('#error').hidden")
    record = page.request.get(f"{server}/api/sessions/{game_id}/record").text()

    page.click("#new-game")
    page.fill("#record-text", "this is not a record")
    page.click("#open-replay")
    page.wait_for_selector("#error:not([hidden])")
    assert "malformed" in page.locator("#error").inner_text()
    page.fill("#record-text", record)
    page.click("#open-replay")
    page.wait_for_selector("#replay-controls:not([hidden])")
    for _ in range(3):
        page.click("#forward")
    page.wait_for_function("document.querySelector('#position').textContent.startsWith("
                           "'position 3 ')")
    third = page.locator("#table").inner_html()
    page.click("#back")
    page.wait_for_function("document.querySelector('#position').textContent.startsWith("
                           "'position 2 ')")
    assert page.locator("#table").inner_html() != third
    page.click("#forward")
    page.wait_for_function("document.querySelector('#position').textContent.startsWith("
                           "'position 3 ')")
    assert page.locator("#table").inner_html() == third


def test_quick_clicks_are_neither_lost_nor_doubled(page, server) -> None:
    """Clicks that come faster than the server's replies (as under load): a double click on a
    move sends one move; three quick steps of a replay go three positions, not one."""
    setup(page, "roy", ["person", "heuristic"])
    page.click("#start")
    page.wait_for_selector("#moves button")
    game_id = page.evaluate("state.id")
    count = page.evaluate("state.event_count")
    sent: list[str] = []
    page.on("request", lambda r: sent.append(r.url) if r.url.endswith("/move") else None)
    with page.expect_response(lambda r: r.url.endswith("/move")):
        page.evaluate("() => { const a = document.querySelector('#moves button').dataset.action;"
                      " move(a); move(a); }")  # both clicks before the first reply
    page.wait_for_function(f"state.event_count > {count}")
    assert len(sent) == 1, sent
    session = page.request.get(f"{server}/api/sessions/{game_id}").json()
    assert [e["who"] for e in session["events"]].count("person") == 1, session["events"]
    assert not page.locator("#error").is_visible(), page.locator("#error").inner_text()

    record = page.request.get(f"{server}/api/sessions/{game_id}/record").text()
    page.click("#new-game")
    page.fill("#record-text", record)
    page.click("#open-replay")
    page.wait_for_selector("#replay-controls:not([hidden])")
    length = page.evaluate("replay.length")
    assert length >= 3
    page.evaluate("stepReplay(1); stepReplay(1); stepReplay(1)")
    page.wait_for_function("document.querySelector('#position').textContent.startsWith("
                           "'position 3 ')")
    page.evaluate(f"for (let i = 0; i < {length + 5}; i++) stepReplay(1)")  # past the end
    page.wait_for_function(f"replay.t === {length}")
    assert not page.locator("#error").is_visible(), page.locator("#error").inner_text()
    assert page.locator("#forward").is_disabled()
