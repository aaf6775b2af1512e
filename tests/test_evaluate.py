"""Evaluation: statistics on agents whose win rate is known, any agent type in any seat."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from card_envs.agents import Agent
from training.actors import RandomActor, make_actor
from training.evaluate import evaluate, format_table, main, play_games, rate, wilson_interval


def test_wilson_interval_matches_reference_values() -> None:
    # Reference values from the closed form (e.g. statsmodels proportion_confint method="wilson").
    lo, hi = wilson_interval(50, 100)
    assert (lo, hi) == pytest.approx((0.4038, 0.5962), abs=1e-4)
    lo, hi = wilson_interval(0, 20)
    assert lo == 0.0 and hi == pytest.approx(0.1611, abs=1e-4)
    lo, hi = wilson_interval(95, 100)
    assert (lo, hi) == pytest.approx((0.8883, 0.9785), abs=1e-4)
    assert wilson_interval(0, 0) == (0.0, 1.0)


class FirstLegal(Agent):
    name = "first-legal"

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return int(np.flatnonzero(action_mask)[0])


def test_random_against_itself_wins_half_with_seats_rotated(monkeypatch) -> None:
    """Identical agents: the true rate is exactly 1/2 (seat rotation cancels the seat edge)."""
    import training.evaluate as evaluate_module

    played: list[list[int]] = []
    real_play_games = evaluate_module.play_games

    def recording(game, config, actors, seatings, **kwargs):
        played.extend(list(s) for s in seatings)
        return real_play_games(game, config, actors, seatings, **kwargs)

    monkeypatch.setattr(evaluate_module, "play_games", recording)
    report = evaluate("roy", ["random", "random"], games=1500, seed=11)
    (match,) = report["matches"]
    lo, hi = match["ci95"]
    assert lo < 0.5 < hi
    assert hi - lo < 0.06
    assert match["wins"] + match["losses"] + match["draws"] == 1500
    # Seat by seat too: each agent played 750 games in each seat.
    assert len(match["seat_win_rate"]) == 2
    assert len(played) == 1500
    assert sorted(map(tuple, played)) == [(0, 1)] * 750 + [(1, 0)] * 750


def test_three_player_focal_agent_against_two_copies_wins_a_third() -> None:
    report = evaluate("roy", ["random", "random"], games=900, config={"num_players": 3},
                      seed=12, pairs=[(0, 1)])
    (match,) = report["matches"]
    assert report["chance"] == pytest.approx(1 / 3)
    # The report names the versioned env and the package it was measured on.
    import card_envs
    from card_envs.versions import current

    assert report["env"] == current("roy").name == card_envs.GAMES["roy"].module.split(".")[-1]
    assert report["package_version"] == card_envs.__version__
    lo, hi = match["ci95"]
    assert lo < 1 / 3 < hi


@pytest.mark.parametrize("game, players", [("roy", 2), ("roy", 3), ("mega_memory", 2)])
def test_duplicate_play_cancels_the_deal(game: str, players: int) -> None:
    """Duplicate play deals each game to every seat in turn: copies of a deterministic agent
    then win exactly their share, where separate deals only come close. And every matchup
    plays the same deals, so two copies of one opponent give the same result."""
    config = {"num_players": players} if players != 2 else {}
    agents = ["heuristic", "heuristic", "heuristic"]
    pairs = [(0, 1), (0, 2)]
    report = evaluate(game, agents, games=60 * players, config=config, seed=3, pairs=pairs,
                      duplicate=True)
    def exact_share(match: dict) -> bool:  # each deal won by one seat, or drawn by all
        return (match["wins"] * (players - 1) == match["losses"]
                and match["wins"] + match["draws"] / players == 60)

    first, second = report["matches"]
    assert report["duplicate"] and "duplicate deals" in format_table(report)
    assert exact_share(first) and exact_share(second)
    separate = evaluate(game, agents, games=60 * players, config=config, seed=3, pairs=pairs)
    assert not all(exact_share(m) for m in separate["matches"])
    # The heuristic against two copies of another deterministic agent: the same deals give
    # the same result.
    def first_legal(observation: np.ndarray, mask: np.ndarray) -> int:
        return int(np.flatnonzero(mask)[0])

    two_copies = ["heuristic", first_legal, first_legal]
    report = evaluate(game, two_copies, games=20 * players, config=config, seed=3, pairs=pairs,
                      duplicate=True)
    first, second = report["matches"]
    assert (first["wins"], first["losses"]) == (second["wins"], second["losses"])
    with pytest.raises(ValueError, match=f"multiple of the {players} players, got 7"):
        evaluate(game, agents, games=7, config=config, duplicate=True, pairs=pairs)


def test_a_stronger_agent_is_separated_and_rated_higher() -> None:
    report = evaluate("roy", ["heuristic", "random"], games=600, seed=13)
    (match,) = report["matches"]
    assert match["ci95"][0] > 0.5  # the heuristic beats random (about 2 in 3)
    ratings = report["ratings"]
    assert ratings["heuristic"]["mu"] > ratings["random"]["mu"]


def test_any_agent_type_anywhere(tmp_path: Path) -> None:
    """A callable, an Agent, a batched actor and the built-ins in one round robin."""

    def callable_agent(obs: np.ndarray, mask: np.ndarray) -> int:
        return int(np.flatnonzero(mask)[-1])

    agents = [callable_agent, FirstLegal(), RandomActor(np.random.default_rng(0)), "heuristic"]
    report = evaluate("roy", agents, games=20, seed=3, config={"num_players": 3})
    assert len(report["matches"]) == 4 * 3  # ordered pairs with more than two seats
    assert len(report["ratings"]) == 4
    text = format_table(report)
    assert "first-legal" in text and "callable_agent" in text


@pytest.mark.parametrize("num_players", [2, 3])
def test_table_columns_line_up_whatever_the_labels(num_players: int) -> None:
    """The width came from the focal agents' labels only: a long label that is only ever an
    opponent (--first-vs-rest, a run path) pushed its rating row's numbers out of line, and
    was cut to 12 characters in the win-rate table."""
    long = "runs/roy/20250101-120000-seed1/best.zip"
    report = evaluate("roy", ["random", "heuristic", "random"], games=3,
                      config={"num_players": num_players}, labels=["rnd", long, "random"],
                      pairs=[(0, 1), (0, 2)])
    wins, ratings = format_table(report).split("\n\n")[1:]
    for table, left, right in ((wins, 2, 3), (ratings, 1, 3)):
        lines = table.splitlines()
        tokens = [list(re.finditer(r"\S+", line)) for line in lines]
        assert len({len(line) for line in lines}) == 1, table
        # Left-aligned label columns start, right-aligned number columns end, at one offset.
        for k in range(1, left):
            assert len({row[k].start() for row in tokens}) == 1, table
        for k in range(1, right + 1):
            assert len({row[-k].end() for row in tokens}) == 1, table
    assert long in wins and long in ratings


def test_play_games_is_reproducible() -> None:
    actors = [make_actor("random", "roy", {}, seed=1), make_actor("random", "roy", {}, seed=2)]
    seatings = [[0, 1], [1, 0]] * 20
    a = play_games("roy", {}, actors, seatings, seed=5, parallel=7)
    actors = [make_actor("random", "roy", {}, seed=1), make_actor("random", "roy", {}, seed=2)]
    b = play_games("roy", {}, actors, seatings, seed=5, parallel=7)
    assert a == b and len(a) == 40


def test_play_games_asks_the_actor_the_seating_names() -> None:
    """Every decision goes to the actor seated there: with actor 1 in both seats, actor 0 is
    never asked; seated at seat 0 only, it is asked for (about) half the decisions."""
    calls = [0, 0]

    def counting(index: int):
        def act(observation: np.ndarray, action_mask: np.ndarray) -> int:
            calls[index] += 1
            return int(np.flatnonzero(action_mask)[0])
        act.__name__ = f"counting{index}"
        return act

    actors = [make_actor(counting(0), "roy", {}), make_actor(counting(1), "roy", {})]
    play_games("roy", {}, actors, [[1, 1]] * 6, seed=3, parallel=4)
    assert calls[0] == 0 and calls[1] > 0
    calls[:] = [0, 0]
    play_games("roy", {}, actors, [[0, 1]] * 6, seed=3, parallel=4)
    assert calls[0] > 0 and calls[1] > 0 and abs(calls[0] - calls[1]) <= 6


def test_illegal_actions_are_reported_with_the_agent() -> None:
    with pytest.raises(ValueError, match=r"^agent '<lambda>' chose an illegal action: roy: "
                                         r"action 69 \(end\) is not legal"):
        evaluate("roy", [lambda obs, mask: 69, "random"], games=4)


def test_cli_writes_json_and_png(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "ev" / "r"
    main(["--game", "roy", "--agents", "random", "heuristic", "--games", "40", "--out",
          str(out)])
    printed = capsys.readouterr().out
    assert "95% CI" in printed and "openskill mu" in printed
    report = json.loads(out.with_suffix(".json").read_text())
    assert report["matches"][0]["games"] == 40
    assert out.with_suffix(".png").stat().st_size > 1000


def test_cli_default_output_never_overwrites(tmp_path: Path, monkeypatch,
                                             capsys: pytest.CaptureFixture) -> None:
    """The default name holds only the game and seed: a second evaluation with the same seed
    gets the next free number instead of replacing the first."""
    monkeypatch.chdir(tmp_path)
    for agents in (["random", "heuristic"], ["heuristic", "random"]):
        main(["--game", "roy", "--agents", *agents, "--games", "4", "--seed", "3"])
    first = json.loads((tmp_path / "eval" / "roy-seed3.json").read_text())
    second = json.loads((tmp_path / "eval" / "roy-seed3-2.json").read_text())
    assert [first["matches"][0]["a"], second["matches"][0]["a"]] == ["random", "heuristic"]
    assert (tmp_path / "eval" / "roy-seed3-2.png").exists()
    assert "wrote eval/roy-seed3-2.json" in capsys.readouterr().out


ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        ({"--games": ["0"]}, r"--games: expected at least 1 game per matchup, got 0"),
        ({"--games": ["-5"]}, r"--games: expected at least 1 game per matchup, got -5"),
        ({"--parallel": ["0"]}, r"--parallel: expected at least 1"),
        ({"--agents": ["random"]}, r"--agents: a matchup needs at least two agents"),
        ({"--env": ["num_players"]}, r"--env: expected KEY=VALUE, got 'num_players'"),
        ({"--env": ["num_player=3"]}, r"unknown config key 'num_player'"),
        ({"--env": ["num_players=["]}, r"--env num_players=\[: not valid YAML: line 1, column 2"),
        ({"--env": ["num_players=3", "num_players=4"]}, r"--env: num_players given twice"),
        ({"--seed": ["-5"]}, r"--seed: expected an integer >= 0, got -5"),
        ({"--config": [str(ROOT / "configs" / "memory_uno.yaml")]},
         r"is a memory_uno config, not roy"),
        ({"--agents": ["rnadom", "random"]}, r"unknown agent 'rnadom'"),
        ({"--game": ["ryo"]}, r"--game: unknown game 'ryo'"),
        ({"--duplicate": [], "--games": ["5"]},
         r"--games: --duplicate deals each game to every seat in turn, so --games must be a "
         r"multiple of the 2 players, got 5"),
    ],
)
def test_cli_usage_errors_are_one_line(flags: dict[str, list[str]], message: str,
                                       tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """Each used to give a meaningless report (0 games, an empty table, another game's options,
    a None option) or a traceback."""
    given = {"--game": ["roy"], "--agents": ["random", "heuristic"], "--games": ["4"],
             "--out": [str(tmp_path / "r")], **flags}
    with pytest.raises(SystemExit) as exit_info:
        main([word for flag, values in given.items() for word in (flag, *values)])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert re.search(message, err) and "Traceback" not in err, err
    assert not list(tmp_path.iterdir())


def test_cli_env_options_add_up_over_repeated_flags(tmp_path: Path) -> None:
    """``--env`` given twice keeps both options (argparse kept only the last use's)."""
    report = main(["--game", "roy", "--agents", "random", "heuristic", "--games", "3",
                   "--env", "num_players=3", "--env", "first_dealer=0", "--out",
                   str(tmp_path / "r")])
    assert report["config"] == {"num_players": 3, "first_dealer": 0}


def test_evaluate_refuses_no_games_and_a_lone_agent() -> None:
    with pytest.raises(ValueError, match="at least 1 game"):
        evaluate("roy", ["random", "heuristic"], games=0)
    with pytest.raises(ValueError, match="at least two agents"):
        evaluate("roy", ["random"], games=2)


@pytest.mark.parametrize("kwargs, message", [
    ({"labels": ["a"]}, r"labels: expected 2 different labels, one per agent, got \['a'\]"),
    ({"labels": ["a", "a"]}, r"labels: expected 2 different labels"),
    ({"pairs": [(0, 2)]}, r"pairs: expected two different indices into agents \(0\.\.1\), "
                          r"got \(0, 2\)"),
    ({"pairs": [(0, -1)]}, r"pairs: .* got \(0, -1\)"),
    ({"pairs": [(1, 1)]}, r"pairs: .* got \(1, 1\)"),
    ({"games": 2.5}, r"games: expected at least 1 game per matchup, got 2\.5"),
    ({"parallel": 0}, r"parallel: expected an integer >= 1, got 0"),
    ({"deterministic": [True]}, r"deterministic: expected a bool or one bool per agent \(2\), "
                                r"got \[True\]"),
    ({"deterministic": [True, 0]}, r"deterministic: .* got \[True, 0\]"),
])
def test_evaluate_arguments_are_errors_naming_them(kwargs: dict, message: str) -> None:
    """From Python: too few labels or a pair past the agents used to fail as an IndexError,
    two equal labels merged two agents' ratings, an agent paired with itself was scored from
    seat 0 only, a float count failed in range() and parallel=0 was taken as 1."""
    with pytest.raises(ValueError, match=message):
        evaluate("roy", ["random", "heuristic"], **{"games": 2, **kwargs})


@pytest.mark.parametrize("seating, parallel, message", [
    ([0], 1, r"seatings\[1\]: expected 2 indices into actors \(0\.\.1\), one per seat, "
             r"got \[0\]"),
    ([0, 1, 1], 1, r"seatings\[1\]: .* got \[0, 1, 1\]"),
    ([0, 2], 1, r"seatings\[1\]: .* got \[0, 2\]"),
    ([0, -1], 1, r"seatings\[1\]: .* got \[0, -1\]"),
    ([0, 1], 0, r"parallel: expected an integer >= 1, got 0"),
])
def test_play_games_refuses_seatings_that_do_not_fit(seating: list, parallel: int,
                                                     message: str) -> None:
    actors = [make_actor("random", "roy", {}, seed=1), make_actor("random", "roy", {}, seed=2)]
    with pytest.raises(ValueError, match=message):
        play_games("roy", {}, actors, [[0, 1], seating], parallel=parallel)


def test_unknown_agent_and_mismatched_policy_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown agent 'rnadom'"):
        evaluate("roy", ["rnadom", "random"], games=2)
    with pytest.raises(FileNotFoundError, match="no best.zip"):
        evaluate("roy", [str(tmp_path), "random"], games=2)


def _save_untrained_policy(path: Path, config: dict | None = None) -> None:
    """An untrained ROY policy (close to uniform over the legal moves) saved at ``path``."""
    from sb3_contrib import MaskablePPO

    from training.selfplay import SelfPlayVecEnv

    env = SelfPlayVecEnv("roy", config or {}, 2, {"random": 1.0}, seed=0)
    MaskablePPO("MlpPolicy", env, n_steps=8, batch_size=16, seed=0,
                policy_kwargs={"net_arch": [16]}).save(path)


def test_baseline_names_win_over_a_folder_of_that_name(tmp_path: Path, monkeypatch) -> None:
    """A folder called ``heuristic`` in the working directory was read as a run directory."""
    monkeypatch.chdir(tmp_path)
    for name in ("random", "heuristic"):
        (tmp_path / name).mkdir()
    assert isinstance(make_actor("random", "roy", {}), RandomActor)
    assert type(make_actor("heuristic", "roy", {}).agent).__name__ == "RoyHeuristic"
    with pytest.raises(FileNotFoundError, match="no best.zip"):
        make_actor("./heuristic", "roy", {})


def test_a_run_directory_and_a_model_in_memory_are_agents_everywhere(tmp_path: Path) -> None:
    """make_actor and evaluate took a run directory, but make_agent (and so the Gymnasium
    env's opponent) failed with "no saved policy at <dir>"; a MaskablePPO in memory was
    "cannot make an agent" everywhere."""
    from sb3_contrib import MaskablePPO

    from card_envs.agents import agent_label, make_agent
    from card_envs.agents.policy import PolicyAgent
    from card_envs.core.gym_env import CardGymEnv

    _save_untrained_policy(tmp_path / "final.zip")
    agent = make_agent(str(tmp_path), "roy")
    assert isinstance(agent, PolicyAgent) and agent.name == "final.zip"
    CardGymEnv("roy", opponent=str(tmp_path)).reset(seed=0)
    model = MaskablePPO.load(tmp_path / "final.zip")
    assert isinstance(make_agent(model, "roy"), PolicyAgent)
    assert agent_label(model) == "MaskablePPO"
    # As its .zip would be, a model is checked against the game and follows --stochastic.
    with pytest.raises(ValueError, match="policy 'MaskablePPO' expects observations"):
        make_agent(model, "roy", {"num_players": 3})
    assert make_actor(model, "roy", {}, deterministic=False).deterministic is False
    assert make_actor(model, "roy", {}).deterministic is True
    report = evaluate("roy", [model, "random"], games=6)
    assert report["matches"][0]["games"] == 6


def test_saved_policy_and_run_directory_as_agents(tmp_path: Path) -> None:
    _save_untrained_policy(tmp_path / "best.zip")
    report = evaluate("roy", [str(tmp_path / "best.zip"), str(tmp_path), "random"], games=10)
    assert [m["games"] for m in report["matches"]] == [10, 10, 10]
    with pytest.raises(ValueError, match=r"expects observations \(238,\).*num_players"):
        evaluate("roy", [str(tmp_path / "best.zip"), "random"], games=2,
                 config={"num_players": 3})


def test_a_saved_policy_samples_when_evaluated_stochastically(tmp_path: Path) -> None:
    """--stochastic reaches .zip agents: one position, many actions (greedy: one)."""
    from card_envs.games import make_engine

    _save_untrained_policy(tmp_path / "p.zip")
    engine = make_engine("roy")
    engine.reset(seed=0)
    obs = np.tile(engine.observation(engine.current_player), (64, 1))
    masks = np.tile(engine.legal_mask(), (64, 1))

    def actions(deterministic: bool) -> set[int]:
        actor = make_actor(str(tmp_path / "p.zip"), "roy", {}, seed=0,
                           deterministic=deterministic)
        return set(actor.act(obs, masks).tolist())

    assert len(actions(True)) == 1 and len(actions(False)) > 1


def _sixty_percent_schedule(seed: int) -> list[list[tuple[list[int], list[int]]]]:
    """Agent 0 beats agent 1 every game and agent 2 in 60% of 1,000 (random order); seats
    swap every game, as in ``evaluate``."""
    rng = np.random.default_rng(seed)
    sweep = [([0, 1], [0]) if g % 2 == 0 else ([1, 0], [1]) for g in range(1000)]
    close = []
    for g, won in enumerate(rng.permutation([True] * 600 + [False] * 400)):
        seating = [0, 2] if g % 2 == 0 else [2, 0]
        close.append((seating, [seating.index(0 if won else 2)]))
    return [sweep, close]


@pytest.mark.parametrize("seed", [0, 1, 159, 171, 234, 248, 264])
def test_ratings_rank_a_sixty_percent_winner_above_the_loser(seed: int) -> None:
    """With skill drift, rated one matchup after another, the latest games decided the order:
    TrueSkill (the evaluator's former library) rated the 60% winner below the agent it beat
    with seeds 159 to 264 (5 of the first 300), and openskill, rated once with the matchups
    interleaved, with seed 159."""
    ratings = rate(3, _sixty_percent_schedule(seed))
    assert ratings[0].mu > ratings[2].mu > ratings[1].mu


def test_scores_rotate_the_focal_seat_and_split_shared_wins(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Scripted outcomes: A rotates through all seats, 1/k per k-way win, no winner = draw."""
    import training.evaluate as evaluate_module

    seats_of_a: list[int] = []

    def scripted(game: str, config: dict, actors: list, seatings: list[list[int]],
                 seed: int = 0, parallel: int = 64,
                 games_per_deal: int = 1, record: str | None = None) -> list[list[int]]:
        # Per four games: A wins alone, A shares with one other seat, nobody wins, A loses.
        winners = []
        for g, seating in enumerate(seatings):
            a_seat = seating.index(0)
            other = (a_seat + 1) % len(seating)
            seats_of_a.append(a_seat)
            winners.append([[a_seat], [a_seat, other], [], [other]][g % 4])
        return winners

    monkeypatch.setattr(evaluate_module, "play_games", scripted)
    report = evaluate("roy", ["random", "random"], games=12, config={"num_players": 3},
                      pairs=[(0, 1)])
    (match,) = report["matches"]
    assert seats_of_a == [0, 1, 2] * 4
    assert (match["wins"], match["losses"], match["draws"]) == (6, 3, 3)
    assert match["win_rate"] == pytest.approx((3 * 1 + 3 * 0.5) / 12)
    assert match["ci95"] == pytest.approx(list(wilson_interval(4.5, 12)))
    assert match["seat_win_rate"] == pytest.approx([0.375, 0.375, 0.375])


def test_ratings_do_not_depend_on_the_order_of_the_games() -> None:
    """The same games, matchups and games within them reversed: the same ratings, exactly."""
    schedule = _sixty_percent_schedule(3)
    backwards = [list(reversed(matchup)) for matchup in reversed(schedule)]
    assert [(r.mu, r.sigma) for r in rate(3, schedule)] == \
        [(r.mu, r.sigma) for r in rate(3, backwards)]


def test_unchanging_agents_grow_more_certain_with_more_games() -> None:
    """No drift: the agents do not change during an evaluation, so four times the games cut
    sigma by well over a third (with openskill's default drift it stalls near 1.5)."""
    rng = np.random.default_rng(0)
    games = [([0, 1] if g % 2 == 0 else [1, 0], [g % 2 if won else 1 - g % 2])
             for g, won in enumerate(rng.random(1600) < 0.6)]
    few, many = rate(2, [games[:400]]), rate(2, [games])
    assert many[0].sigma < 0.7 * few[0].sigma
    assert many[0].mu > many[1].mu


def test_an_agent_in_several_seats_gets_the_mean_of_their_updates() -> None:
    """Agent 1 fills seats 1 (won) and 2 (lost): its rating is the mean of both updates."""
    from openskill.models import PlackettLuce

    model = PlackettLuce(tau=0.0)
    new = model.rate([[model.rating()] for _ in range(3)], ranks=[1, 0, 1])
    a, b = rate(2, [[([0, 1, 1], [1])]])
    assert (a.mu, a.sigma) == pytest.approx((new[0][0].mu, new[0][0].sigma))
    assert b.mu == pytest.approx((new[1][0].mu + new[2][0].mu) / 2)
    assert b.sigma == pytest.approx((new[1][0].sigma + new[2][0].sigma) / 2)


def _run(folder: Path, env: dict, game: str = "roy", device: str = "cpu",
         greedy: bool = True) -> Path:
    """A run directory as training leaves it, as far as evaluation reads it: its config.yaml
    and an (untrained, ROY) best.zip."""
    from training.config import from_dict, save_config

    folder.mkdir(parents=True)
    cfg = from_dict({"game": game, "env": env, "training": {"device": device},
                     "evaluation": {"deterministic": greedy}}, check_cuda=False)
    save_config(cfg, folder / "config.yaml")
    _save_untrained_policy(folder / "best.zip", env if game == "roy" else {})
    return folder


FULL_GAMES = {"episode": "game", "target_score": 20}


def test_cli_plays_a_run_on_its_own_game_options(tmp_path: Path, capsys: pytest.CaptureFixture,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A run trained on full games used to be evaluated on single hands (the game's default)
    unless --config named its config again."""
    import torch

    # Its config.yaml asks for CUDA, which this machine need not have to evaluate it.
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    run = _run(tmp_path / "runs" / "a", FULL_GAMES, device="cuda")
    config_file = str(run / "config.yaml")
    out = tmp_path / "ev"
    # The run directory and a policy in it: one run, named once.
    report = main(["--game", "roy", "--agents", str(run / "best.zip"), "random", str(run),
                   "--games", "2", "--out", str(out)])
    assert report["config"] == FULL_GAMES and report["config_from"] == [config_file]
    assert json.loads(out.with_suffix(".json").read_text())["config_from"] == [config_file]
    printed = capsys.readouterr().out
    assert printed.startswith(f"game options from {config_file}: {FULL_GAMES}\n"), printed
    # --env still overrides, on top.
    report = main(["--game", "roy", "--agents", str(run), "random", "--games", "2", "--out",
                   str(out), "--env", "target_score=30"])
    assert report["config"] == {**FULL_GAMES, "target_score": 30}
    assert report["config_from"] == [config_file, "--env target_score=30"]
    assert "and --env target_score=30: " in capsys.readouterr().out
    # No run among the agents: the game's defaults, and the report says so.
    report = main(["--game", "roy", "--agents", "heuristic", "random", "--games", "2", "--out",
                   str(out)])
    assert report["config"] == {} and report["config_from"] == []
    assert "game options" not in capsys.readouterr().out


def test_cli_runs_on_different_game_options_are_a_usage_error(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    a = _run(tmp_path / "runs" / "a", FULL_GAMES)
    b = _run(tmp_path / "runs" / "b", {**FULL_GAMES, "memory": "none"})
    out = tmp_path / "ev" / "r"
    argv = ["--game", "roy", "--agents", str(a / "best.zip"), str(b), "--games", "2", "--out",
            str(out)]
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert (f"--agents: the runs {a / 'best.zip'} and {b} were trained on different game "
            "options (memory: 'perfect' vs 'none'); pass --config <run or config>") in err
    assert "--env KEY=VALUE" in err
    assert not out.parent.exists()
    # Either way out: one run's options, or setting the ones that differ.
    report = main([*argv, "--config", str(b)])
    assert report["config"] == {**FULL_GAMES, "memory": "none"}
    assert report["config_from"] == [str(b / "config.yaml")]
    report = main([*argv, "--env", "memory=none"])
    assert report["config"] == {**FULL_GAMES, "memory": "none"}
    assert report["config_from"] == [str(a / "config.yaml"), str(b / "config.yaml"),
                                     "--env memory=none"]


def test_cli_a_run_of_another_game_is_a_usage_error(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture) -> None:
    run = _run(tmp_path / "uno", {}, game="memory_uno")
    with pytest.raises(SystemExit) as exit_info:
        main(["--game", "roy", "--agents", str(run / "best.zip"), "random", "--games", "2",
              "--out", str(tmp_path / "ev" / "r")])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert (f"agent {run / 'best.zip'}: its run's config {run / 'config.yaml'} is a memory_uno "
            "config, not roy") in err


def test_cli_policies_play_as_their_runs_were_evaluated(tmp_path: Path,
                                                         capsys: pytest.CaptureFixture) -> None:
    """A run evaluated with sampled moves while it trained (Deluxe Memory's config) was
    re-evaluated greedily unless --stochastic was remembered, --config <run> included."""
    sampled = _run(tmp_path / "runs" / "s", {}, greedy=False)
    greedy = _run(tmp_path / "runs" / "g", {})
    (tmp_path / "loose").mkdir()
    _save_untrained_policy(tmp_path / "loose" / "p.zip")  # no run around it
    out = ["--games", "2", "--out", str(tmp_path / "ev" / "r")]
    report = main(["--game", "roy", "--agents", str(sampled / "best.zip"), str(greedy),
                   str(tmp_path / "loose" / "p.zip"), "random", *out])
    assert report["policy_play"] == {"s/best.zip": "sampled", str(greedy): "greedy",
                                     "loose/p.zip": "greedy"}
    assert report["deterministic"] == [False, True, True, True]
    printed = capsys.readouterr().out
    assert (f"s/best.zip samples (evaluation.deterministic in {sampled / 'config.yaml'})"
            in printed), printed
    assert f"{greedy} plays greedily (evaluation.deterministic in {greedy / 'config.yaml'})" \
        in printed
    assert "loose/p.zip plays greedily (the default)" in printed
    assert "random plays" not in printed and "random samples" not in printed
    # --config names one run's settings for every policy; a flag overrides any config.
    report = main(["--game", "roy", "--agents", str(greedy / "best.zip"), "random",
                   "--config", str(sampled), *out])
    assert report["policy_play"] == {"g/best.zip": "sampled"}
    report = main(["--game", "roy", "--agents", str(sampled / "best.zip"), "random",
                   "--deterministic", *out])
    assert report["policy_play"] == {"s/best.zip": "greedy"}
    assert "s/best.zip plays greedily (--deterministic)" in capsys.readouterr().out
    report = main(["--game", "roy", "--agents", str(greedy), "random", "--stochastic", *out])
    assert report["policy_play"] == {str(greedy): "sampled"}
    with pytest.raises(SystemExit) as exit_info:
        main(["--game", "roy", "--agents", str(greedy), "random", "--stochastic",
              "--deterministic", *out])
    assert exit_info.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err
