"""``card-envs play [--host 127.0.0.1] [--port N] [--no-browser]``: serve the app locally."""

from __future__ import annotations

import argparse
import errno
import socket
import sys
import threading
import webbrowser

EXTRA_HINT = 'card-envs play needs the play extra: pip install "card-envs[play]"'


def bind(host: str, port: int) -> socket.socket:
    """The listening socket, bound here so a taken port is one clear line, not a traceback."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.bind((host, port))
    except OSError as err:
        sock.close()
        if err.errno == errno.EADDRINUSE:
            raise SystemExit(f"card-envs play: port {port} on {host} is taken (another "
                             f"card-envs play, or another server): pass --port with another "
                             "number, or --port 0 for any free one") from None
        raise SystemExit(f"card-envs play: cannot listen on {host}:{port}: {err}") from None
    sock.listen(64)
    return sock


def main(argv: list[str] | None = None, prog: str = "card-envs play") -> int:
    parser = argparse.ArgumentParser(prog=prog, description="Play the games in a browser "
                                     "against any agent, watch agents play, replay records.")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (default 127.0.0.1: this machine only)")
    parser.add_argument("--port", type=int, default=8765, help="port (0: any free one)")
    parser.add_argument("--no-browser", action="store_true", help="do not open a browser")
    args = parser.parse_args(argv)
    if not 0 <= args.port <= 65535:
        parser.error(f"--port: expected 0..65535, got {args.port}")
    try:
        import uvicorn

        from card_envs.play.server import make_app
    except ImportError as err:
        print(f"{EXTRA_HINT} ({err})", file=sys.stderr)
        return 2  # as train and evaluate without their extra
    sock = bind(args.host, args.port)
    port = sock.getsockname()[1]
    url = f"http://{'[' + args.host + ']' if ':' in args.host else args.host}:{port}/"
    print(f"card-envs play: {url} (Ctrl-C stops it)", flush=True)
    if not args.no_browser:
        threading.Timer(0.5, webbrowser.open, (url,)).start()
    server = uvicorn.Server(uvicorn.Config(make_app(), log_level="warning"))
    server.run(sockets=[sock])
    return 0
