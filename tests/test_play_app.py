"""The play app over HTTP (Starlette's TestClient: no browser, no socket): every mode, every
refusal a 4xx with a message and the game unharmed. The real-browser run is
tests/test_play_browser.py (marker ``browser``)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx2")
from starlette.testclient import TestClient  # noqa: E402

from card_envs.games import GAMES  # noqa: E402
from card_envs.play.server import make_app  # noqa: E402


@pytest.fixture
def client() -> TestClient:
    return TestClient(make_app())


def start(client: TestClient, game: str, person: bool = True, **extra: object) -> dict:
    n = GAMES[game].engine_class()().num_players
    seats = [{"kind": "person" if person and s == 0 else "random"} for s in range(n)]
    response = client.post("/api/sessions", json={"game": game, "seats": seats, "seed": 3,
                                                  **extra})
    assert response.status_code == 200, response.text
    return response.json()


def test_page_and_games(client: TestClient) -> None:
    page = client.get("/")
    assert page.status_code == 200 and "/static/app.js" in page.text
    for name in ("app.js", "style.css"):  # served by the package: nothing from the network
        text = client.get(f"/static/{name}").text
        assert text and "http://" not in text and "https://" not in text
    assert "http" not in page.text.replace('href="/static', "")
    games = client.get("/api/games").json()
    assert [g["name"] for g in games] == list(GAMES)
    for g in games:
        assert {"person", "random", "heuristic", "policy"} <= set(g["agents"])
        assert "num_players" in g["options"]


@pytest.mark.parametrize("game", sorted(GAMES))
def test_a_person_plays_a_whole_game(client: TestClient, game: str) -> None:
    state = start(client, game)
    moves = 0
    while not state["over"]:
        assert state["your_turn"] and state["legal"], state
        state = client.post(f"/api/sessions/{state['id']}/move",
                            json={"action": state["legal"][0]}).json()
        moves += 1
        assert moves < 3000
    assert state["result"]["winners"] is not None
    record = client.get(f"/api/sessions/{state['id']}/record")
    assert record.status_code == 200
    from card_envs.records import GameRecord, replay

    *_, engine = replay(GameRecord.loads(record.text))
    assert engine.done


def test_watch_and_replay_both_ways(client: TestClient) -> None:
    state = start(client, "roy", person=False)
    assert state["mode"] == "watch" and state["legal"] == []
    while not state["over"]:
        state = client.post(f"/api/sessions/{state['id']}/advance").json()
    text = client.get(f"/api/sessions/{state['id']}/record").text
    rep = client.post("/api/replays", json={"record": text}).json()
    length = rep["length"]
    assert rep["t"] == 0 and length == len(text.splitlines()) - 2
    forward = client.get(f"/api/replays/{rep['id']}/5").json()
    assert forward["event"]["action"]
    back = client.get(f"/api/replays/{rep['id']}/4").json()
    assert back["scene"] != forward["scene"]
    assert client.get(f"/api/replays/{rep['id']}/5").json() == forward  # steps both ways


def test_bad_requests_are_4xx_and_the_game_is_unharmed(client: TestClient) -> None:
    state = start(client, "roy")
    sid = state["id"]
    before = client.get(f"/api/sessions/{sid}").json()
    illegal = next(n for n in ("play:AC", "play:2C", "draw") if n not in state["legal"])
    for body, status, words in [
        ({"action": illegal}, 400, "illegal move"),
        ({"action": "fly"}, 400, "unknown move"),
        ({"nothing": 1}, 400, "expected {'action'"),
    ]:
        response = client.post(f"/api/sessions/{sid}/move", json=body)
        assert response.status_code == status and words in response.json()["error"]
    response = client.post(f"/api/sessions/{sid}/move", content=b"{not json")
    assert response.status_code == 400 and "not JSON" in response.json()["error"]
    assert client.post(f"/api/sessions/{sid}/advance").status_code == 409
    assert client.get(f"/api/sessions/{sid}").json() == before
    cases = [
        client.post("/api/sessions", json={"game": "chess", "seats": []}),
        client.post("/api/sessions", json={"game": "roy", "seats": [{"kind": "person"}]}),
        client.post("/api/sessions", json={"game": "roy", "options": {"num_players": 9},
                                           "seats": []}),
        client.post("/api/sessions", json={"game": "roy", "seats": [{"kind": "person"}] * 2}),
        client.post("/api/sessions", json={"game": "roy", "seats": [{"kind": "wizard"}] * 2}),
        client.post("/api/replays", json={"record": "not a record"}),
        client.post("/api/replays", json={"record": json.dumps({"format": "x"})}),
        client.get("/api/sessions/nope"),
        client.get("/no/such/page"),
        client.delete("/api/sessions"),
    ]
    for response in cases:
        assert 400 <= response.status_code < 500, response.text
        assert response.json()["error"]
    assert "unknown game 'chess'" in cases[0].json()["error"]
    assert "malformed" in cases[5].json()["error"]
    assert client.post(f"/api/sessions/{sid}/move",
                       json={"action": state["legal"][0]}).status_code == 200


def test_several_games_at_once(client: TestClient) -> None:
    a, b = start(client, "roy"), start(client, "dogpile")
    assert a["id"] != b["id"]
    client.post(f"/api/sessions/{a['id']}/move", json={"action": a["legal"][0]})
    assert client.get(f"/api/sessions/{b['id']}").json()["event_count"] == b["event_count"]


def test_port_taken_is_one_clear_line() -> None:
    import socket

    from card_envs.play.main import bind

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        with pytest.raises(SystemExit, match=f"port {port} on 127.0.0.1 is taken"):
            bind("127.0.0.1", port)


def test_cli_registers_play() -> None:
    from card_envs.cli import COMMANDS

    assert any(c.name == "play" and c.module == "card_envs.cli.play" for c in COMMANDS)


@pytest.mark.filterwarnings("ignore::UserWarning")  # an untrained policy records no identity
def test_policy_probabilities_and_value(client: TestClient, tmp_path) -> None:
    """A saved policy's probabilities and value: on each of its moves in a watched game, and
    on a person's own decisions (its reading of their view, never of another seat's)."""
    pytest.importorskip("sb3_contrib")
    from tests.test_evaluate import _save_untrained_policy

    _save_untrained_policy(tmp_path / "p.zip")
    policy = {"kind": "policy", "path": str(tmp_path / "p.zip")}
    watched = client.post("/api/sessions", json={
        "game": "roy", "seats": [policy, {"kind": "random"}], "seed": 1, "show_policy": True})
    assert watched.status_code == 200, watched.text
    sid = watched.json()["id"]
    events = []
    for _ in range(6):
        events += client.post(f"/api/sessions/{sid}/advance").json()["events"]
    mine = [e for e in events if e["seat"] == 0]
    assert mine
    for event in mine:  # the most likely first, each a probability, at most all of the mass
        probs = [p for _, p in event["policy"]["probs"]]
        assert probs == sorted(probs, reverse=True) and all(0 < p <= 1 for p in probs)
        assert sum(probs) <= 1.0001 and isinstance(event["policy"]["value"], float)
    assert all("policy" not in e for e in events if e["seat"] == 1)
    played = client.post("/api/sessions", json={
        "game": "roy", "seats": [{"kind": "person"}, policy], "seed": 1,
        "show_policy": True}).json()
    assert {a for a, _ in played["policy"]["probs"]} <= set(played["legal"])
    assert isinstance(played["policy"]["value"], float)
    assert all("policy" not in e for e in played["events"])  # the policy seat's own: hidden
    bad = client.post("/api/sessions", json={
        "game": "roy", "seats": [{"kind": "policy", "path": str(tmp_path / "none.zip")},
                                 {"kind": "random"}]})
    assert bad.status_code == 400 and "none.zip" in bad.json()["error"]
