"""Seat-rotated round-robin evaluation of any agents, with confidence intervals and ratings.

    python -m training.evaluate --game roy --agents random heuristic runs/roy/<run>/best.zip \
        --games 2000

Every pair of agents plays a matchup. In a two-player game the two sit opposite each other and
swap seats every game. With more seats, agent A (the *focal* agent) takes one seat, rotated
through all seats, and B fills every other seat, so "A beats random in 3-player ROY" means A
against two random players (chance is 1/3). A's score in a game is 1 for a sole win, 1/k for a
k-way shared win, 0 otherwise; its win rate carries a 95% Wilson interval. Ratings (openskill's
Plackett-Luce model, a maintained successor to TrueSkill in the same mu/sigma terms) come from
every game, seat by seat as a free-for-all, without skill drift and independent of the games'
order (:func:`rate`); an agent that fills several seats of one game gets the mean of those
seats' updates.

Agents: ``random``, ``heuristic``, a saved ``.zip`` policy, a run directory (its best policy),
and, from Python, any :class:`~card_envs.agents.Agent`, callable or batched actor. The command
line plays on the game options of ``--config``, else of the runs among the agents (their
``config.yaml``, which must agree), then ``--env``; each policy picks its moves as its run's
``evaluation.deterministic`` says (or ``--config``'s), unless ``--stochastic`` or
``--deterministic`` says otherwise for all.

``--duplicate`` plays each deal once with the focal agent in every seat, and the same deals in
every matchup, as duplicate bridge does: the luck of the deal cancels out of a comparison (two
copies of a deterministic agent tie exactly). The intervals still treat games as independent,
so they are conservative there.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations, permutations
from typing import Any

import numpy as np

from card_envs import __version__
from card_envs.agents import agent_label
from card_envs.core.engine import check_count, integer_action
from card_envs.games import get_game, make_engine
from card_envs.records import Recorder
from card_envs.versions import env_name

from .actors import ActorSpec, BatchActor, TorchPolicyActor, make_actor


def wilson_interval(successes: float, n: int, z: float = 1.959964) -> tuple[float, float]:
    """95% Wilson score interval for a binomial proportion (sound near 0 and 1, unlike the
    normal approximation)."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass
class MatchResult:
    """Agent ``a`` (one seat) against agent ``b`` (every other seat), from ``a``'s side."""

    a: str
    b: str
    games: int = 0
    score: float = 0.0  # sole win 1, k-way shared win 1/k
    wins: int = 0  # a among the winners
    losses: int = 0  # a not among the winners, somebody won
    draws: int = 0  # nobody won (blocked hand, truncation)
    seat_wins: list[float] = field(default_factory=list)

    @property
    def win_rate(self) -> float:
        return self.score / self.games if self.games else 0.0

    def to_dict(self) -> dict[str, Any]:
        lo, hi = wilson_interval(self.score, self.games)
        return {"a": self.a, "b": self.b, "games": self.games, "win_rate": self.win_rate,
                "ci95": [lo, hi], "wins": self.wins, "losses": self.losses, "draws": self.draws,
                "seat_win_rate": self.seat_wins}


def play_games(game: str, config: dict[str, Any], actors: Sequence[BatchActor],
               seatings: Sequence[Sequence[int]], seed: int = 0,
               parallel: int = 64, games_per_deal: int = 1,
               record: str | None = None) -> list[list[int]]:
    """Play one game per seating (``seatings[g][seat]`` = index into ``actors``), many at once.

    Each round gathers every pending decision of each actor across the live games into one
    batched call. Returns the winners (seats) of each game, in the order given. Consecutive
    blocks of ``games_per_deal`` games are dealt from the same seed (duplicate play).
    ``record``: a path prefix; game ``g`` is written to ``<record>-<g>.jsonl`` as a game record
    (:mod:`card_envs.records`) when it ends.
    """
    check_count("parallel", parallel)
    check_count("games_per_deal", games_per_deal)
    seatings = [list(s) for s in seatings]
    if not seatings:
        return []
    parallel = min(parallel, len(seatings))
    deals = np.random.SeedSequence(seed).generate_state(
        -(-len(seatings) // games_per_deal), np.uint64)
    seeds = np.repeat(deals, games_per_deal)
    engines = [make_engine(game, **config) for _ in range(parallel)]
    n_players = engines[0].num_players
    for g, seating in enumerate(seatings):
        # A short seating failed as an IndexError mid-game; a long one, or an index of -1,
        # was played without a word.
        if len(seating) != n_players or not all(
                integer_action(i) is not None and 0 <= i < len(actors) for i in seating):
            raise ValueError(f"seatings[{g}]: expected {n_players} indices into actors "
                             f"(0..{len(actors) - 1}), one per seat, got {seating}")
    size, n_actions = engines[0].layout.size, engines[0].num_actions
    obs = np.zeros((parallel, size), dtype=np.float32)
    masks = np.zeros((parallel, n_actions), dtype=np.int8)
    winners: list[list[int]] = [[] for _ in seatings]
    game_of = [-1] * parallel  # which seating each engine is playing
    next_game = 0
    recorders = [Recorder(engine) for engine in engines] if record else None

    def start(slot: int) -> None:
        nonlocal next_game
        game_of[slot] = next_game
        if recorders is not None:
            recorders[slot].players = [actors[i].name for i in seatings[next_game]]
            recorders[slot].reset(seed=int(seeds[next_game]))
        else:
            engines[slot].reset(seed=int(seeds[next_game]))
        next_game += 1

    live = []
    for slot in range(parallel):
        start(slot)
        live.append(slot)
    while live:
        groups: dict[int, list[int]] = {}
        for slot in live:
            engine = engines[slot]
            groups.setdefault(seatings[game_of[slot]][engine.current_player], []).append(slot)
        for actor_index, slots in groups.items():
            k = len(slots)
            for j, slot in enumerate(slots):
                engine = engines[slot]
                engine.write_observation(engine.current_player, obs[j])
                masks[j] = engine.legal_mask()
            act_engines = getattr(actors[actor_index], "act_engines", None)
            if act_engines is not None:  # a search agent: it reads the positions
                actions = act_engines([engines[slot] for slot in slots])
            else:
                actions = actors[actor_index].act(obs[:k], masks[:k])
            for j, slot in enumerate(slots):
                a = int(actions[j])
                if not masks[j, a]:
                    raise ValueError(f"agent {actors[actor_index].name!r} chose an illegal "
                                     f"action: {engines[slot].illegal_reason(a)}")
                if recorders is not None:
                    recorders[slot].step(a)
                else:
                    engines[slot].step(a)
        still = []
        for slot in live:
            engine = engines[slot]
            if engine.done:
                done_record = recorders[slot].record if recorders is not None else None
                if done_record is not None:
                    done_record.save(f"{record}-{game_of[slot]:05d}.jsonl")
                winners[game_of[slot]] = list(engine.result()["winners"])
                if next_game < len(seatings):
                    start(slot)
                    still.append(slot)
            else:
                still.append(slot)
        live = still
    return winners


def _rotated_seatings(n_players: int, games: int, a: int, b: int) -> list[list[int]]:
    """``a`` in one seat (cycling through all seats), ``b`` everywhere else."""
    out = []
    for g in range(games):
        seats = [b] * n_players
        seats[g % n_players] = a
        out.append(seats)
    return out


def _score(match: MatchResult, seating: list[int], winners: list[int], a: int,
           seat_tally: np.ndarray, seat_games: np.ndarray) -> None:
    seat = seating.index(a)
    match.games += 1
    seat_games[seat] += 1
    if not winners:
        match.draws += 1
    elif seat in winners:
        match.wins += 1
        match.score += 1.0 / len(winners)
        seat_tally[seat] += 1.0 / len(winners)
    else:
        match.losses += 1


#: Seeded orders each evaluation's games are rated in (their ratings are averaged).
RATING_ORDERS = 8


def rate(num_agents: int, schedule: Sequence[Sequence[tuple[list[int], list[int]]]],
         orders: int = RATING_ORDERS) -> list[Any]:
    """openskill Plackett-Luce ratings from every matchup's games (each a list of (seating,
    winners)): objects with ``mu`` and ``sigma``, one per agent.

    The agents do not change during an evaluation, so their skills get no drift (``tau=0``;
    with drift the last games outweigh the rest, and sigma stops shrinking). An online rating
    still depends on the order of its games, which here is arbitrary: the games are put in one
    canonical order, rated in ``orders`` seeded random orders from it, and the ratings averaged.
    So the same games give the same ratings in any order, and no stretch of games decides them
    (rated one matchup after another, an agent that won 60% of its games was sometimes rated
    below the loser).
    """
    from openskill.models import PlackettLuce

    model = PlackettLuce(tau=0.0)
    games = sorted((list(seating), sorted(winners)) for matchup in schedule
                   for seating, winners in matchup)
    rng = np.random.default_rng(0)
    mu, sigma = np.zeros(num_agents), np.zeros(num_agents)
    for _ in range(orders):
        ratings = [model.rating() for _ in range(num_agents)]
        for g in rng.permutation(len(games)):
            _update_ratings(ratings, model, *games[g])
        mu += np.array([r.mu for r in ratings])
        sigma += np.array([r.sigma for r in ratings])
    return [model.rating(mu=float(m), sigma=float(s))
            for m, s in zip(mu / orders, sigma / orders, strict=True)]


def _update_ratings(ratings: list[Any], model: Any, seating: list[int],
                    winners: list[int]) -> None:
    """One free-for-all update, each seat a team of one; winners share rank 0, the rest rank
    1. An agent in several seats gets the mean of their updates."""
    if not winners or len(set(seating)) < 2:
        return
    ranks = [0 if s in winners else 1 for s in range(len(seating))]
    # A rating object of its own for every seat: openskill matches its results to its inputs
    # by identity, and one object in two seats got one update for both.
    teams = [[model.rating(mu=ratings[i].mu, sigma=ratings[i].sigma)] for i in seating]
    new = model.rate(teams, ranks=ranks)
    for agent in set(seating):
        seats = [s for s, i in enumerate(seating) if i == agent]
        ratings[agent] = model.rating(mu=sum(new[s][0].mu for s in seats) / len(seats),
                                      sigma=sum(new[s][0].sigma for s in seats) / len(seats))


def evaluate(game: str, agents: Sequence[ActorSpec], games: int = 1000,
             config: dict[str, Any] | None = None, seed: int = 0, parallel: int = 64,
             deterministic: bool | Sequence[bool] = True, labels: Sequence[str] | None = None,
             pairs: Sequence[tuple[int, int]] | None = None,
             duplicate: bool = False, allow_policy_mismatch: bool = False,
             record: str | None = None) -> dict[str, Any]:
    """Round robin of ``agents`` (``games`` per matchup); see the module docstring.

    ``deterministic``: whether policies play their most likely move (else they sample), for
    every policy alike or one entry per agent (ignored for agents that are not policies and
    for ready actors and ``PolicyAgent`` objects, which keep their own setting;
    ``policy_play`` in the report says how each policy played).
    ``pairs`` restricts the matchups (indices into ``agents``); by default every unordered pair
    plays in a two-player game and every ``(focal, field)`` pair with more seats.
    ``duplicate``: every deal is played once with the focal agent in each seat, and every
    matchup plays the same deals, so the luck of the deal cancels out of the comparison
    (``games`` must then be a multiple of the player count).
    ``allow_policy_mismatch``: play saved policies that record another game, other options or
    other versions than this env's (refused by default, listing the differences).
    ``record``: a directory that receives every game as a game record
    (``<a>-vs-<b>-<game>.jsonl``; :mod:`card_envs.records`).
    """
    config = dict(config or {})
    get_game(game)
    n_players = make_engine(game, **config).num_players
    if isinstance(agents, (str, os.PathLike)):  # its letters would be taken for agents
        raise ValueError(f"agents: expected a list of agents, got {agents!r}")
    if integer_action(games) is None or games < 1:
        raise ValueError(f"games: expected at least 1 game per matchup, got {games!r}")
    check_count("parallel", parallel)
    if duplicate and games % n_players:
        raise ValueError(f"games: duplicate play deals each game to every seat in turn, so "
                         f"games must be a multiple of the {n_players} players, got {games}")
    if pairs is None and len(agents) < 2:
        raise ValueError(f"a round robin needs at least two agents, got {len(agents)}")
    for a, b in pairs or ():
        if a == b or not all(integer_action(i) is not None and 0 <= i < len(agents)
                             for i in (a, b)):
            raise ValueError(f"pairs: expected two different indices into agents "
                             f"(0..{len(agents) - 1}), got {(a, b)}")
    if labels and (len(labels) != len(agents) or len(set(labels)) != len(labels)):
        # Too few failed as an IndexError; two alike merged their agents' ratings into one.
        raise ValueError(f"labels: expected {len(agents)} different labels, one per agent, "
                         f"got {list(labels)}")
    labels = list(labels) if labels else _unique_labels(agents)
    if not isinstance(deterministic, bool) and (
            len(deterministic) != len(agents)
            or not all(isinstance(d, (bool, np.bool_)) for d in deterministic)):
        raise ValueError(f"deterministic: expected a bool or one bool per agent "
                         f"({len(agents)}), got {deterministic!r}")
    actors = make_actors(game, agents, config, seed, deterministic, allow_policy_mismatch)
    if pairs is None:
        idx = range(len(agents))
        pairs = list(combinations(idx, 2)) if n_players == 2 else list(permutations(idx, 2))
    matches, schedule = [], []
    for m, (a, b) in enumerate(pairs):
        seatings = _rotated_seatings(n_players, games, a, b)
        # Duplicate play deals every matchup the same games; otherwise each its own.
        winners = play_games(game, config, actors, seatings,
                             seed=seed + 7919 * (1 if duplicate else m + 1), parallel=parallel,
                             games_per_deal=n_players if duplicate else 1,
                             record=_record_prefix(record, m, labels[a], labels[b]))
        match = MatchResult(labels[a], labels[b])
        tally, counts = np.zeros(n_players), np.zeros(n_players)
        for seating, won in zip(seatings, winners, strict=True):
            _score(match, seating, won, a, tally, counts)
        schedule.append(list(zip(seatings, winners, strict=True)))
        match.seat_wins = (tally / np.maximum(counts, 1)).tolist()
        matches.append(match)
    ratings = rate(len(agents), schedule)
    return {
        "game": game,
        # The versioned env and the package the figures were measured on (docs/versioning.md).
        "env": env_name(game),
        "package_version": __version__,
        "config": config,
        "num_players": n_players,
        "games_per_match": games,
        "seed": seed,
        "deterministic": (deterministic if isinstance(deterministic, bool)
                          else [bool(d) for d in deterministic]),
        # How each policy chose its moves (a ready actor brings its own setting).
        "policy_play": {label: "greedy" if actor.deterministic else "sampled"
                        for label, actor in zip(labels, actors, strict=True)
                        if isinstance(actor, TorchPolicyActor)},
        "duplicate": duplicate,
        "chance": 1.0 / n_players,
        "matches": [m.to_dict() for m in matches],
        "ratings": {labels[i]: {"mu": r.mu, "sigma": r.sigma, "conservative": r.mu - 3 * r.sigma}
                    for i, r in enumerate(ratings)},
    }


def _record_prefix(directory: str | None, match: int, a: str, b: str) -> str | None:
    """Where a matchup's game records go (labels made safe as file names), or None."""
    if directory is None:
        return None
    os.makedirs(directory, exist_ok=True)
    safe = [re.sub(r"[^A-Za-z0-9_.-]+", "_", os.path.basename(x.rstrip("/\\"))) or "agent"
            for x in (a, b)]
    return os.path.join(directory, f"m{match:02d}-{safe[0]}-vs-{safe[1]}")


def make_actors(game: str, agents: Sequence[ActorSpec], config: dict[str, Any], seed: int,
                deterministic: bool | Sequence[bool],
                allow_policy_mismatch: bool = False) -> list[BatchActor]:
    """The batched actors :func:`evaluate` plays with ``seed`` (ready actors pass through);
    ``deterministic`` for all policies or one per agent."""
    modes = ([deterministic] * len(agents) if isinstance(deterministic, bool)
             else [bool(d) for d in deterministic])
    return [make_actor(spec, game, config, seed=seed + 1000 + i, deterministic=mode,
                       allow_policy_mismatch=allow_policy_mismatch)
            for i, (spec, mode) in enumerate(zip(agents, modes, strict=True))]


def _unique_labels(agents: Sequence[ActorSpec]) -> list[str]:
    labels = []
    for spec in agents:
        label = agent_label(spec)
        if os.path.sep in label and label.endswith(".zip"):
            parent = os.path.basename(os.path.dirname(label))
            label = f"{parent}/{os.path.basename(label)}"
        base, k = label, 2
        while label in labels:
            label, k = f"{base}#{k}", k + 1
        labels.append(label)
    return labels


def format_table(report: dict[str, Any]) -> str:
    """Win-rate table (A against B) and ratings, as plain text."""
    n = report["num_players"]
    vs = "vs" if n == 2 else f"vs {n - 1}x"
    duplicate = ", duplicate deals" if report.get("duplicate") else ""
    lines = [f"{report['game']} ({n} players, {report['games_per_match']} games per match"
             f"{duplicate}, chance {report['chance']:.3f})", ""]
    # Each column as wide as its longest label. Opponents are not cut short (two runs' best.zip
    # can differ only past the cut), and the ratings list every agent, also those that are only
    # ever opponents (with --first-vs-rest, all but the first).
    a_width = max([len(m["a"]) for m in report["matches"]] + [len("agent")])
    b_width = max([len(m["b"]) for m in report["matches"]] + [len(vs)])
    lines.append(f"{'agent':<{a_width}}  {vs:<{b_width}} {'win rate':>8}  {'95% CI':<15} "
                 f"{'W':>5} {'L':>5} {'D':>5}")
    for m in report["matches"]:
        lo, hi = m["ci95"]
        lines.append(f"{m['a']:<{a_width}}  {m['b']:<{b_width}} {m['win_rate']:8.3f}  "
                     f"[{lo:.3f}, {hi:.3f}]  {m['wins']:5d} {m['losses']:5d} {m['draws']:5d}")
    width = max([len(label) for label in report["ratings"]] + [len("agent")])
    lines += ["", f"{'agent':<{width}}  {'openskill mu':>12} {'sigma':>6} {'mu-3s':>7}"]
    for label, r in sorted(report["ratings"].items(), key=lambda kv: -kv[1]["mu"]):
        lines.append(f"{label:<{width}}  {r['mu']:12.2f} {r['sigma']:6.2f} "
                     f"{r['conservative']:7.2f}")
    return "\n".join(lines)


def plot_report(report: dict[str, Any], path: str) -> None:
    """Bar chart of every matchup's win rate with its 95% interval and the chance line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    matches = report["matches"]
    fig, ax = plt.subplots(figsize=(max(5, 1.2 * len(matches) + 2), 4))
    names = [f"{m['a']}\nvs {m['b']}" for m in matches]
    rates = [m["win_rate"] for m in matches]
    err = np.array([[m["win_rate"] - m["ci95"][0], m["ci95"][1] - m["win_rate"]]
                    for m in matches]).T.clip(min=0.0)  # float round-off at rates 0 and 1
    ax.bar(range(len(matches)), rates, yerr=err, capsize=4, color="tab:blue")
    ax.axhline(report["chance"], color="grey", linestyle="--", label="chance")
    ax.set_xticks(range(len(matches)), names, fontsize=7)
    ax.set_ylim(0, 1)
    ax.set_ylabel("win rate (95% Wilson CI)")
    ax.set_title(f"{report['game']}: {report['games_per_match']} games per match")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


EXAMPLES = """\
examples:
  {prog} --game roy --agents random heuristic --games 2000
  {prog} --game roy --agents runs/roy/<run> heuristic random --first-vs-rest
  {prog} --game memory_uno --agents heuristic random --env num_players=3 --duplicate --games 3000
  {prog} --game roy --agents search:simulations=100,rollout=heuristic heuristic --games 200

Agents: random, heuristic, search (ISMCTS or flat; search:<key>=<value>,... sets simulations,
time_ms, c, rollout, rollout_depth, policy, leaf, value, opponents, prior, method, z:
docs/baselines.md), a saved policy
.zip, or a run directory (its best.zip). The game
options come from --config, else from the runs among the agents (their config.yaml, which must
agree), then --env. Writes <out>.json (every match, win rates with 95% Wilson intervals,
ratings) and <out>.png.
"""


def main(argv: Sequence[str] | None = None,
         prog: str = "python -m training.evaluate") -> dict[str, Any]:
    """The command line (``card-envs evaluate``; ``prog`` names it in help and messages)."""
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0],
                                     epilog=EXAMPLES.format(prog=prog),
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", required=True)
    parser.add_argument("--agents", nargs="+", required=True,
                        help="two or more of: random, heuristic, search (or "
                             "search:<key>=<value>,... e.g. search:simulations=100,"
                             "rollout=heuristic), a policy .zip, a run directory")
    parser.add_argument("--games", type=int, default=1000, help="games per matchup (>= 1)")
    parser.add_argument("--env", nargs="+", action="extend", default=[], metavar="KEY=VALUE",
                        help="game options, e.g. num_players=3 (YAML values; --env may be "
                             "given more than once)")
    parser.add_argument("--config", help="take the game options from a training config / run "
                                         "(of the same --game); default: from the runs among "
                                         "--agents, which must agree")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--allow-policy-mismatch", action="store_true",
                        help="play saved policies that record another game, other options or "
                             "other versions than the env's (refused by default)")
    parser.add_argument("--parallel", type=int, default=64, help="games played at once (>= 1)")
    play_mode = parser.add_mutually_exclusive_group()
    play_mode.add_argument("--stochastic", action="store_const", const=False,
                           dest="deterministic", help="every policy samples its moves")
    play_mode.add_argument("--deterministic", action="store_const", const=True,
                           help="every policy plays its most likely move (default: as its run's "
                                "evaluation.deterministic says, or --config's; greedy otherwise)")
    parser.add_argument("--first-vs-rest", action="store_true",
                        help="only the first agent against each of the others")
    parser.add_argument("--duplicate", action="store_true",
                        help="duplicate play: each deal once with the focal agent in every "
                             "seat, the same deals in every matchup (--games a multiple of "
                             "the player count)")
    parser.add_argument("--record", metavar="DIR", default=None,
                        help="write every game as a JSON-lines game record into DIR "
                             "(replay with card_envs.records)")
    parser.add_argument("--out", default=None,
                        help="output prefix (default: eval/<game>-seed<seed>, numbered -2, -3, "
                             "... rather than overwrite an earlier evaluation)")
    args = parser.parse_args(argv)

    import torch

    from card_envs.games import GAMES

    from .assignments import parse_assignments
    from .config import ConfigError

    if args.game not in GAMES:
        parser.error(f"--game: unknown game {args.game!r}; installed: {', '.join(GAMES)}")
    if len(args.agents) < 2:
        parser.error("--agents: a matchup needs at least two agents, e.g. "
                     "--agents runs/<game>/<run> random heuristic")
    if args.games < 1:
        parser.error(f"--games: expected at least 1 game per matchup, got {args.games}")
    if args.parallel < 1:
        parser.error(f"--parallel: expected at least 1, got {args.parallel}")
    if args.seed < 0:
        parser.error(f"--seed: expected an integer >= 0, got {args.seed}")
    torch.set_num_threads(1)
    try:
        overrides = parse_assignments(args.env, "--env")
    except ConfigError as err:
        parser.error(str(err))
    from .config import load_config

    # Where the game options come from: --config, else the runs among the agents (a policy is
    # only meaningful on the variant it was trained on), else the game's defaults.
    sources: dict[str, str] = {}  # config file -> what named it
    agent_sources: list[str | None] = []  # each agent's entry in sources, if it has one
    if args.config:
        path = args.config
        if os.path.isdir(path):
            path = os.path.join(path, "config.yaml")
        sources[path] = f"--config {args.config}"
        agent_sources = [path] * len(args.agents)
    else:
        for agent in args.agents:
            path = run_config_path(agent)
            if path is not None:
                path = next((p for p in sources if os.path.samefile(path, p)), path)
                sources.setdefault(path, agent)
            agent_sources.append(path)
    options: dict[str, dict[str, Any]] = {}
    greedy: dict[str, bool] = {}  # config file -> its evaluation.deterministic
    for path, named_by in sources.items():
        try:
            # Only its game options are read: a CUDA device need not exist on this machine.
            cfg = load_config(path, check_cuda=False)
        except ConfigError as err:
            hint = "" if args.config else f" (read for {named_by}; --config can name another)"
            parser.error(f"{err}{hint}")
        if cfg.game != args.game:
            where = named_by if args.config else f"agent {named_by}: its run's config {path}"
            parser.error(f"{where} is a {cfg.game} config, not {args.game}: its game options "
                         "would not be this game's")
        options[path] = {**cfg.env, **overrides}
        greedy[path] = cfg.evaluation.deterministic
    if args.deterministic is not None:
        play = [(args.deterministic, "--deterministic" if args.deterministic else "--stochastic")
                for _ in args.agents]
    else:
        # A policy plays as its run was evaluated while it trained (Deluxe Memory's sample).
        play = [(True, "the default") if path is None
                else (greedy[path], f"evaluation.deterministic in {path}")
                for path in agent_sources]
    try:
        # Resolved here, so a bad option or agent is a usage error, not a traceback.
        resolved = {path: make_engine(args.game, **env).config for path, env in options.items()}
        first = next(iter(options), None)
        for path in options:
            if first is None or resolved[path] == resolved[first]:
                continue
            differ = ", ".join(f"{k}: {v!r} vs {resolved[path][k]!r}"
                               for k, v in resolved[first].items() if resolved[path][k] != v)
            parser.error(f"--agents: the runs {sources[first]} and {sources[path]} were trained "
                         f"on different game options ({differ}); pass --config <run or "
                         "config> to evaluate on one run's, or --env KEY=VALUE to set those "
                         "that differ")
        config = {**(options[first] if first else {}), **overrides}
        n_players = make_engine(args.game, **config).num_players
        if args.duplicate and args.games % n_players:
            parser.error(f"--games: --duplicate deals each game to every seat in turn, so "
                         f"--games must be a multiple of the {n_players} players, got "
                         f"{args.games}")
        actors = make_actors(args.game, args.agents, config, args.seed,
                             [greedy_play for greedy_play, _ in play],
                             args.allow_policy_mismatch)
    except (ValueError, FileNotFoundError) as err:
        parser.error(str(err))
    if sources:
        print(f"game options from {', '.join(sources)}"
              + (f" and --env {' '.join(args.env)}" if args.env else "") + f": {config}")
    labels = _unique_labels(args.agents)
    for label, actor, (_, why) in zip(labels, actors, play, strict=True):
        if isinstance(actor, TorchPolicyActor):
            print(f"{label} {'plays greedily' if actor.deterministic else 'samples'} ({why})")
    report = evaluate(args.game, actors, games=args.games, config=config, seed=args.seed,
                      parallel=args.parallel, deterministic=[d for d, _ in play],
                      labels=labels,
                      pairs=[(0, j) for j in range(1, len(args.agents))]
                      if args.first_vs_rest else None, duplicate=args.duplicate,
                      record=args.record)
    # Where report["config"] came from: config files, then --env (none: the game's defaults).
    ordered: dict[str, Any] = {}
    for key, value in report.items():
        ordered[key] = value
        if key == "config":
            ordered["config_from"] = [*sources, *(f"--env {item}" for item in args.env)]
    report = ordered
    print(format_table(report))
    prefix = args.out or _unused_prefix(os.path.join("eval", f"{args.game}-seed{args.seed}"))
    os.makedirs(os.path.dirname(prefix) or ".", exist_ok=True)
    with open(prefix + ".json", "w") as f:
        json.dump(report, f, indent=2)
    plot_report(report, prefix + ".png")
    print(f"\nwrote {prefix}.json and {prefix}.png")
    return report


def run_config_path(agent: str) -> str | None:
    """The ``config.yaml`` of the run an agent comes from (a run directory, or a ``.zip`` in
    one or in its ``policies/``), if there is one."""
    if agent in ("random", "heuristic") or agent.startswith("search"):
        return None
    if os.path.isdir(agent):
        path = os.path.join(agent, "config.yaml")
    elif agent.endswith(".zip"):
        folder = os.path.dirname(agent)
        path = os.path.join(folder, "config.yaml")
        if not os.path.isfile(path) and os.path.basename(os.path.abspath(folder)) == "policies":
            path = os.path.normpath(os.path.join(folder, os.pardir, "config.yaml"))
    else:
        return None
    return path if os.path.isfile(path) else None


def _unused_prefix(base: str) -> str:
    """``base``, or ``base-2``, ``base-3``, ...: the first whose .json and .png do not exist.
    The default name says only the game and seed, and evaluations of different agents with the
    same seed are common; an explicit ``--out`` is the user's to overwrite."""
    prefix, k = base, 1
    while os.path.exists(prefix + ".json") or os.path.exists(prefix + ".png"):
        k += 1
        prefix = f"{base}-{k}"
    return prefix


if __name__ == "__main__":
    main()
