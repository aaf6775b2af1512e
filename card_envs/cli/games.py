"""``card-envs games``: every game, its players, actions, observation and options.

The figures come from the engines themselves (an engine built per player count), the options
from their declarations (:class:`card_envs.core.config.Option`), so this listing cannot drift
from what ``make_engine`` and the envs accept. Imports no torch.
"""

from __future__ import annotations

import argparse
import json
import textwrap
from typing import Any

from card_envs.core.config import Option
from card_envs.games import GAMES, GameSpec, make_engine

WIDTH = 100  # the text form's lines
EPILOG = """\
Every option is a keyword of env(), raw_env(), gymnasium.make() and make_engine(), and a key
of a training config's env: section (card-envs train roy --set env.num_players=3).
"""


def describe(spec: GameSpec) -> dict[str, Any]:
    """One game as plain data (what ``--json`` prints)."""
    options = spec.engine_class().options()
    players = options["num_players"]
    counts = list(players.choices or (players.default,))
    sizes = {}
    for n in counts:
        engine = make_engine(spec.name, num_players=n)
        sizes[n] = {"actions": engine.num_actions, "observation": engine.layout.size,
                    "state": engine.state_layout.size}
    default = sizes[players.default]
    return {
        "name": spec.name,
        "title": spec.title,
        "gymnasium_id": spec.gym_id,
        "pettingzoo_id": spec.pz_id,
        "entry_module": spec.module,
        "players": {"default": players.default, "allowed": counts},
        "actions": default["actions"],
        "observation_size": default["observation"],
        "state_size": default["state"],
        "by_players": {str(n): s for n, s in sizes.items()},
        "parallel_env": spec.parallel,
        "options": {key: _option(option) for key, option in options.items()},
    }


def _option(option: Option) -> dict[str, Any]:
    return {"default": _plain(option.default),
            "choices": None if option.choices is None else [_plain(c) for c in option.choices],
            "allowed": option.allowed(), "doc": option.doc}


def _plain(value: Any) -> Any:
    """JSON's types: a tuple default (a stacked setting) as a list."""
    return [_plain(v) for v in value] if isinstance(value, tuple) else value


def format_game(game: dict[str, Any]) -> str:
    package, _, module = game["entry_module"].rpartition(".")
    lines = [f"{game['name']} ({game['title']})",
             f"  ids: Gymnasium {game['gymnasium_id']}, PettingZoo {game['pettingzoo_id']}; "
             f"from {package} import {module}"
             + (" (env() and parallel_env())" if game["parallel_env"] else "")]
    players = game["players"]
    lines.append(f"  players: {_list(players['allowed'])} (default {players['default']})")
    by_players = game["by_players"]
    if len({(s["actions"], s["observation"]) for s in by_players.values()}) == 1:
        lines.append(f"  actions: {game['actions']}; observation: {game['observation_size']} "
                     f"floats; state: {game['state_size']} floats")
    else:
        lines.append("  actions, observation and state sizes by players:")
        lines += [f"    {n}: {s['actions']} actions, observation {s['observation']}, state "
                  f"{s['state']}" for n, s in by_players.items()]
    lines.append("  options:")
    width = max(len(k) for k in game["options"])
    for key, option in game["options"].items():
        lines.append(f"    {key:<{width}}  default {option['default']!r}; allowed: "
                     f"{option['allowed']}")
        lines += textwrap.wrap(option["doc"], WIDTH, initial_indent=" " * (width + 6),
                               subsequent_indent=" " * (width + 6))
    return "\n".join(lines)


def _list(values: list[Any]) -> str:
    ints = all(isinstance(v, int) for v in values)
    if ints and len(values) > 2 and values == list(range(values[0], values[-1] + 1)):
        return f"{values[0]}-{values[-1]}"
    return ", ".join(str(v) for v in values)


def main(argv: list[str], prog: str) -> int:
    parser = argparse.ArgumentParser(
        prog=prog, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
        description="List every game: its ids, players, action and observation sizes, and "
                    "its options with their defaults and allowed values.")
    parser.add_argument("game", nargs="*", metavar="GAME",
                        help=f"only these games (of {', '.join(GAMES)})")
    parser.add_argument("--json", action="store_true",
                        help="print one JSON object for scripts: {\"games\": [...]}")
    args = parser.parse_args(argv)
    unknown = [name for name in args.game if name not in GAMES]
    if unknown:
        parser.error(f"unknown game {unknown[0]!r}; the games are {', '.join(GAMES)}")
    games = [describe(GAMES[name]) for name in (args.game or GAMES)]
    if args.json:
        print(json.dumps({"games": games}, indent=2))
    else:
        print("\n\n".join(format_game(g) for g in games))
    return 0
