"""The app's HTTP routes (Starlette). JSON in and out under /api; the page and its script
from the package's static/ folder (no build step, nothing fetched from the network). Every
refusal is a 4xx with ``{"error": message}``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from card_envs.play.sessions import RequestError, Store, agent_kinds

STATIC = Path(__file__).parent / "static"
MAX_BODY = 4_000_000  # a record of a long game is a few hundred kB


def _plain(value: Any) -> Any:
    return json.loads(json.dumps(value, default=lambda v: v.tolist()
                                 if hasattr(v, "tolist") else str(v)))


def ok(value: Any) -> JSONResponse:
    return JSONResponse(_plain(value))


async def body_of(request: Request) -> Any:
    raw = await request.body()
    if len(raw) > MAX_BODY:
        raise RequestError(413, f"request body over {MAX_BODY} bytes")
    try:
        return json.loads(raw or b"null")
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise RequestError(400, f"the request body is not JSON: {err}") from None


def make_app() -> Starlette:
    store = Store()

    async def index(request: Request) -> Response:
        return FileResponse(STATIC / "index.html")

    async def games(request: Request) -> Response:
        from card_envs.games import GAMES

        out = []
        for name, spec in GAMES.items():
            options = spec.engine_class().options()
            out.append({"name": name, "title": spec.title, "agents": agent_kinds(name),
                        "options": {key: {"default": o.default, "doc": o.doc,
                                          "choices": list(o.choices) if o.choices else None,
                                          "allowed": o.allowed()}
                                    for key, o in options.items()}})
        return ok(out)

    async def new_session(request: Request) -> Response:
        session = store.new_session(await body_of(request))
        return ok(session.payload())

    async def get_session(request: Request) -> Response:
        session = store.session(request.path_params["id"])
        since = request.query_params.get("since", "0")
        if not since.isdigit():
            raise RequestError(400, f"since: expected an event count >= 0, got {since!r}")
        with session.lock:
            return ok(session.payload(int(since)))

    async def move(request: Request) -> Response:
        session = store.session(request.path_params["id"])
        body = await body_of(request)
        if not isinstance(body, dict) or "action" not in body:
            raise RequestError(400, "expected {'action': a move's name}")
        with session.lock:
            before = len(session.events)
            session.move(body["action"])
            return ok(session.payload(before))

    async def advance(request: Request) -> Response:
        session = store.session(request.path_params["id"])
        with session.lock:
            before = len(session.events)
            session.advance()
            return ok(session.payload(before))

    async def record(request: Request) -> Response:
        session = store.session(request.path_params["id"])
        with session.lock:
            rec = session.recorder.record
            assert rec is not None
            return PlainTextResponse(rec.dumps(), media_type="application/x-ndjson")

    async def new_replay(request: Request) -> Response:
        body = await body_of(request)
        text = body.get("record") if isinstance(body, dict) else None
        return ok(store.new_replay(text).payload(0))

    async def replay_at(request: Request) -> Response:
        item = store.replay(request.path_params["id"])
        return ok(item.payload(request.path_params["t"]))

    async def refused(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, RequestError)
        return JSONResponse({"error": str(exc)}, status_code=exc.status)

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        message = (f"no such page: {request.url.path}" if exc.status_code == 404
                   else f"{request.method} is not allowed on {request.url.path}"
                   if exc.status_code == 405 else str(exc.detail))
        return JSONResponse({"error": message}, status_code=exc.status_code)

    routes = [
        Route("/", index),
        Route("/api/games", games),
        Route("/api/sessions", new_session, methods=["POST"]),
        Route("/api/sessions/{id}", get_session),
        Route("/api/sessions/{id}/move", move, methods=["POST"]),
        Route("/api/sessions/{id}/advance", advance, methods=["POST"]),
        Route("/api/sessions/{id}/record", record),
        Route("/api/replays", new_replay, methods=["POST"]),
        Route("/api/replays/{id}/{t:int}", replay_at),
        Mount("/static", StaticFiles(directory=STATIC)),
    ]
    return Starlette(routes=routes, exception_handlers={RequestError: refused,
                                                        HTTPException: http_error})
