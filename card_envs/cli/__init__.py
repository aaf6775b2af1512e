"""The ``card-envs`` command: one entry point, one small module per subcommand.

    card-envs games [GAME] [--json]      every game: players, actions, observation, options
    card-envs train GAME_OR_CONFIG ...   self-play MaskablePPO (needs card-envs[train])
    card-envs evaluate --game ...        round-robin evaluation (needs card-envs[train])
    card-envs demo                       one game rendered, then heuristic vs random
    card-envs bench                      environment throughput against references

A subcommand is a :class:`Command` in :data:`COMMANDS`: its module has
``main(argv: list[str], prog: str) -> int`` and parses its own arguments, so this module imports
none of them until one is run (``card-envs games`` never imports torch). Adding a subcommand
(``card-envs play``) is one more entry and one more module.
"""

from __future__ import annotations

import difflib
import importlib
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass

PROG = "card-envs"


@dataclass(frozen=True)
class Command:
    name: str
    module: str  # has main(argv: list[str], prog: str) -> int
    summary: str  # one line, for ``card-envs --help``


COMMANDS: tuple[Command, ...] = (
    Command("games", "card_envs.cli.games",
            "list every game: players, actions, observation size, options and their values"),
    Command("train", "card_envs.cli.train",
            "train a policy by self-play (a game's shipped config, or a config file; "
            "--resume a run)"),
    Command("evaluate", "card_envs.cli.evaluate",
            "play agents (random, heuristic, policies, runs) against each other: win rates, "
            "intervals, ratings"),
    Command("demo", "card_envs.cli.demo",
            "watch one game played move by move, then heuristic vs random over many games"),
    Command("play", "card_envs.cli.play",
            "play a game in the browser against any agent, watch agents play, replay a "
            "game record (the play extra)"),
    Command("bench", "card_envs.cli.bench",
            "measure the envs' throughput against RLCard and PettingZoo references"),
)


def usage() -> str:
    from card_envs import __version__

    width = max(len(c.name) for c in COMMANDS)
    lines = [f"usage: {PROG} [-h] [--version] COMMAND [ARGS ...]", "",
             f"card-envs {__version__}: card-game reinforcement-learning environments "
             "(PettingZoo AEC, Gymnasium), their baselines and a self-play trainer.", "",
             "commands:"]
    lines += [f"  {c.name:<{width}}  {c.summary}" for c in COMMANDS]
    lines += ["", f"`{PROG} COMMAND --help` describes a command. train and evaluate need the "
                  'training extra: pip install "card-envs[train]".']
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``card-envs`` with ``argv`` (default: the process's); returns the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(usage(), file=sys.stdout if args else sys.stderr)
        return 0 if args else 2
    if args[0] == "--version":
        from card_envs import __version__

        print(f"{PROG} {__version__}")
        return 0
    by_name = {c.name: c for c in COMMANDS}
    command = by_name.get(args[0])
    if command is None:
        close = difflib.get_close_matches(args[0], list(by_name), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        print(f"{PROG}: error: unknown command {args[0]!r}{hint}; the commands are "
              f"{', '.join(by_name)} (see {PROG} --help)", file=sys.stderr)
        return 2
    run = importlib.import_module(command.module).main
    try:
        return int(run(args[1:], f"{PROG} {command.name}"))
    except BrokenPipeError:  # `card-envs games | head`: the reader has all it wanted
        # Python's recipe: point stdout at devnull, so that the flush at exit fails no more.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
