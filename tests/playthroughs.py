"""Golden playthroughs: recorded traces of seeded games that the tests replay and compare.

We promise that the same seed gives the same game, in any process, on any machine and with any
supported library version. numpy keeps only its bit generators' raw streams stable between
versions, not ``Generator`` methods such as ``permutation`` or ``integers`` that the engines
deal with, so nothing else would tell us when an upgrade (or an engine change) deals other
games. Like OpenSpiel's playthroughs, this module plays a few seeded episodes of every game
through every env view and records a SHA-256 of everything each step shows (files small: hashes,
not raw data), and one readable playthrough per game so that a reviewer sees what changed.

What is recorded, in ``tests/playthroughs/<game>.json``:

* ``aec``: every (game, config) pair the shared API tests run (``tests.conftest.VARIANTS``),
  through the PettingZoo AEC env (``<game>_v<N>.env``);
* ``gym``: the game's Gymnasium id (``gymnasium.make``, default config) against random and
  heuristic opponents with ``learner_seat="random"``, whose seeding derives the deal, the seat
  draw and each opponent's stream from the one seed;
* ``parallel``: Dogpile's Parallel env for each of its variants.

Each case plays :data:`EPISODES`: seeded resets, and one ``reset()`` without a seed, which
continues the streams the episode before left. Actions come from ``random.Random(action
seed)`` choosing among the mask's legal ids (its ``randrange`` is stable across Python
versions); in Memory-Uno, whose random seats call the round within a few decisions, the
choice is steered as the shared tests steer it (:func:`choose`). Per episode: the step count,
the final ``result()`` (canonical JSON), the SHA-256 over every step's agent, observation
(float32 little-endian), mask, action, rewards (float64), termination, truncation, info and
the seer state (``state()``), and the running digest every :data:`CHECKPOINT` steps, so a
mismatch names the window where the games part. ``tests/playthroughs/<game>.txt`` is the
first :data:`READABLE_STEPS` decisions of the default config's seed-0 AEC episode, rendered.

``python -m tests.playthroughs`` compares the recordings with the code and lists the
differences; ``python -m tests.playthroughs --update`` rewrites them (after an intended rule
change: explain the change in the commit message, and bump the game's env version with
``python -m tests.env_versions``: docs/versioning.md). ``tests/test_playthroughs.py`` replays
every recorded case in the default test run.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import random
import struct
import sys
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from card_envs.games import GAMES
from tests.conftest import VARIANT_IDS, VARIANTS
from tests.steer import ROUND_ENDERS, STEERED_GAMES

DIR = Path(__file__).resolve().parent / "playthroughs"
UPDATE = "python -m tests.playthroughs --update"
#: (reset seed, action seed) per episode; a reset seed of None is ``reset()`` without a seed,
#: which continues the streams the episode before it left.
EPISODES: tuple[tuple[int | None, int], ...] = ((0, 0), (1, 1), (None, 2))
#: The running digest is kept every this many steps: a mismatch is located to such a window.
CHECKPOINT = 25
#: Hex digits kept of each checkpoint digest (the full digest still covers every step).
CHECKPOINT_HEX = 8
#: Memory-Uno's steered play (as tests/steer.py's): no ``call`` for this many decisions.
KEEP_PLAYING = 80
#: Decisions shown in each game's readable playthrough.
READABLE_STEPS = 40
GYM_OPPONENTS = ("random", "heuristic")


# -- hashing ------------------------------------------------------------------------------------
def canonical_json(value: Any) -> str:
    """``value`` as JSON with sorted keys and no spaces (tuples and arrays become lists)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False,
                      default=_plain)


def _plain(value: Any) -> Any:
    """numpy values in infos (the ``winners`` vector) as JSON values."""
    if isinstance(value, (np.ndarray, np.generic)):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not JSON data")


def _f32(array: np.ndarray) -> bytes:
    return np.ascontiguousarray(array, dtype="<f4").tobytes()


def _i8(array: np.ndarray) -> bytes:
    return np.ascontiguousarray(array, dtype="i1").tobytes()


def _f64(value: float) -> bytes:
    return struct.pack("<d", float(value))


@dataclass
class Trace:
    """The running SHA-256 of an episode's steps, with a checkpoint every CHECKPOINT steps and,
    with ``keep_notes``, a line per step saying what happened (for mismatch reports)."""

    keep_notes: bool = False
    sha: Any = field(default_factory=hashlib.sha256)
    steps: int = 0
    checkpoints: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def step(self, parts: list[bytes], note: Callable[[], str] | None = None) -> None:
        sha = self.sha
        sha.update(struct.pack("<q", self.steps))
        for part in parts:
            sha.update(struct.pack("<q", len(part)))  # no two step records hash alike
            sha.update(part)
        if self.keep_notes:
            self.notes.append(f"step {self.steps}: {note() if note else ''}")
        self.steps += 1
        if self.steps % CHECKPOINT == 0:
            self.checkpoints.append(sha.hexdigest()[:CHECKPOINT_HEX])

    def episode(self, reset_seed: int | None, action_seed: int,
                result: dict[str, Any]) -> dict[str, Any]:
        if self.steps % CHECKPOINT:  # the last window's digest, before the result's
            self.checkpoints.append(self.sha.hexdigest()[:CHECKPOINT_HEX])
        text = canonical_json(result)
        self.sha.update(text.encode())
        out = {"seed": reset_seed, "action_seed": action_seed, "steps": self.steps,
               "result": json.loads(text), "sha256": self.sha.hexdigest(),
               "checkpoints": self.checkpoints}
        if self.keep_notes:
            out["notes"] = self.notes
        return out


def _flags(*values: bool) -> bytes:
    return bytes(bool(v) for v in values)


# -- the action stream --------------------------------------------------------------------------
class Chooser:
    """Legal actions from ``random.Random(seed)``: uniform among the mask's legal ids, but in
    :data:`tests.steer.STEERED_GAMES` (Memory-Uno) a family of actions (``throw``, ``peek``,
    ...) uniformly, then one of its actions, and no ``call`` for the episode's first
    :data:`KEEP_PLAYING` decisions (a random seat calls the round within a few decisions)."""

    # tests/steer.py's steered_move, written again on purpose: it draws from a numpy Generator,
    # whose choice() stream numpy does not promise to keep across versions; a recording must.
    def __init__(self, game: str, action_names: list[str], seed: int) -> None:
        self.rng = random.Random(seed)
        self.steered = game in STEERED_GAMES
        self.family = [n.split(":")[0] for n in action_names]
        self.ender = [n in ROUND_ENDERS for n in action_names]
        self.decisions = 0

    def __call__(self, mask: np.ndarray) -> int:
        rng = self.rng
        legal = [i for i, allowed in enumerate(mask.tolist()) if allowed]
        if not legal:
            raise AssertionError("a live position with no legal action")
        if self.steered:
            if self.decisions < KEEP_PLAYING:
                keep = [a for a in legal if not self.ender[a]]
                legal = keep or legal
            families = list(dict.fromkeys(self.family[a] for a in legal))
            family = families[rng.randrange(len(families))]
            legal = [a for a in legal if self.family[a] == family]
        self.decisions += 1
        return legal[rng.randrange(len(legal))]


# -- the three views ----------------------------------------------------------------------------
def _aec_module(game: str):
    return importlib.import_module(GAMES[game].module)


def play_aec(game: str, config: dict[str, Any], keep_notes: bool = False,
             episodes: tuple[tuple[int | None, int], ...] = EPISODES) -> list[dict[str, Any]]:
    env = _aec_module(game).env(**config)
    names = env.engine.action_names
    out = []
    for reset_seed, action_seed in episodes:
        env.reset(seed=reset_seed)
        choose = Chooser(game, names, action_seed)
        trace = Trace(keep_notes)
        for agent in env.agent_iter():
            obs, reward, term, trunc, info = env.last()
            action = None if term or trunc else choose(obs["action_mask"])
            rewards = b"".join(_f64(env.rewards[a]) for a in env.agents)
            trace.step(
                [agent.encode(), _f32(obs["observation"]), _i8(obs["action_mask"]),
                 _f64(reward), rewards, _flags(term, trunc), canonical_json(info).encode(),
                 _f32(env.state()), struct.pack("<q", -1 if action is None else action)],
                lambda a=agent, x=action, r=reward: f"{a} {names[x] if x is not None else None}"
                                                    f" (reward {r})")
            env.step(action)
        out.append(trace.episode(reset_seed, action_seed, env.engine.result()))
    return out


def play_gym(game: str, opponent: str, keep_notes: bool = False,
             episodes: tuple[tuple[int | None, int], ...] = EPISODES) -> list[dict[str, Any]]:
    import gymnasium

    import card_envs  # noqa: F401  (registers the ids)

    env = gymnasium.make(GAMES[game].gym_id, opponent=opponent, learner_seat="random")
    engine = env.unwrapped.engine
    names = engine.action_names
    out = []
    for reset_seed, action_seed in episodes:
        obs, info = env.reset(seed=reset_seed)
        choose = Chooser(game, names, action_seed)
        trace = Trace(keep_notes)
        trace.step([_f32(obs), _i8(info["action_mask"]),
                    struct.pack("<qq", info["learner_seat"], info["redeals"])],
                    lambda i=info: f"reset: learner seat {i['learner_seat']}, "
                                   f"{i['redeals']} redeals")
        done = False
        while not done:
            action = choose(info["action_mask"])
            obs, reward, term, trunc, info = env.step(action)
            done = term or trunc
            trace.step([struct.pack("<q", action), _f32(obs), _i8(info["action_mask"]),
                        _f64(reward), _flags(term, trunc),
                        struct.pack("<q", info["learner_seat"]),
                        canonical_json(info.get("winners")).encode()],
                       lambda x=action, r=reward: f"learner {names[x]} (reward {r})")
        out.append(trace.episode(reset_seed, action_seed, env.unwrapped.result()))
    env.close()
    return out


def play_parallel(game: str, config: dict[str, Any], keep_notes: bool = False,
                  episodes: tuple[tuple[int | None, int], ...] = EPISODES
                  ) -> list[dict[str, Any]]:
    env = _aec_module(game).parallel_env(**config)
    names = env.engine.action_names
    out = []
    for reset_seed, action_seed in episodes:
        observations, infos = env.reset(seed=reset_seed)
        choose = Chooser(game, names, action_seed)
        trace = Trace(keep_notes)
        rewards: dict[str, float] = {}
        terms: dict[str, bool] = {}
        truncs: dict[str, bool] = {}
        while True:
            parts = []
            for agent, obs in observations.items():
                parts += [agent.encode(), _f32(obs["observation"]), _i8(obs["action_mask"])]
            parts += [canonical_json([rewards, terms, truncs, infos]).encode(),
                      _f32(env.state())]
            if not env.agents:
                trace.step(parts, lambda: "over")
                break
            actions = {a: choose(observations[a]["action_mask"]) for a in env.agents}
            parts.append(canonical_json(actions).encode())
            trace.step(parts, lambda x=actions: ", ".join(
                f"{a} {names[v]}" for a, v in x.items()))
            observations, rewards, terms, truncs, infos = env.step(actions)
        out.append(trace.episode(reset_seed, action_seed, env.engine.result()))
    return out


# -- the cases ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Case:
    kind: str  # "aec", "gym" or "parallel"
    game: str
    key: str  # the variant's id (tests.conftest.VARIANT_IDS) or "opponent=<spec>"
    config: dict[str, Any]

    @property
    def name(self) -> str:
        """``aec:roy-num_players=2``, ``gym:roy-opponent=random``, ``parallel:dogpile-...``."""
        return f"{self.kind}:{self.game}-{self.key}" if self.kind == "gym" else \
            f"{self.kind}:{self.key}"

    def play(self, keep_notes: bool = False,
             episodes: tuple[tuple[int | None, int], ...] = EPISODES) -> list[dict[str, Any]]:
        if self.kind == "aec":
            return play_aec(self.game, self.config, keep_notes, episodes)
        if self.kind == "gym":
            return play_gym(self.game, self.config["opponent"], keep_notes, episodes)
        return play_parallel(self.game, self.config, keep_notes, episodes)


def cases() -> list[Case]:
    """Every case the recordings must hold: the shared tests' variants through the AEC env
    (and Dogpile's through its Parallel env too), each game's Gymnasium id per opponent kind."""
    out = [Case("aec", game, vid, config)
           for (game, config), vid in zip(VARIANTS, VARIANT_IDS, strict=True)]
    for game in GAMES:
        out += [Case("gym", game, f"opponent={opp}", {"opponent": opp})
                for opp in GYM_OPPONENTS]
    out += [Case("parallel", game, vid, config)
            for (game, config), vid in zip(VARIANTS, VARIANT_IDS, strict=True)
            if GAMES[game].parallel]
    return out


def record(case: Case) -> dict[str, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # gymnasium's passive checker's advice, and the like
        episodes = case.play()
    return {"config": json.loads(canonical_json(case.config)), "episodes": episodes}


# -- the readable playthrough -------------------------------------------------------------------
def readable(game: str, steps: int = READABLE_STEPS) -> str:
    """The default config's seed-0 AEC episode (the same choices as the recorded one): the
    position before each of the first ``steps`` decisions, rendered, and the move made."""
    env = _aec_module(game).env(render_mode="ansi")
    reset_seed, action_seed = EPISODES[0]
    env.reset(seed=reset_seed)
    choose = Chooser(game, env.engine.action_names, action_seed)
    lines = [f"# {GAMES[game].title}: default config, reset(seed={reset_seed}), actions from "
             f"random.Random({action_seed}); first {steps} decisions.",
             f"# Regenerate with `{UPDATE}` (tests/playthroughs.py).", ""]
    shown = 0
    for agent in env.agent_iter():
        obs, reward, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        action = choose(obs["action_mask"])
        if shown < steps:
            legal = int(obs["action_mask"].sum())
            lines += [f"--- decision {shown}: {agent} to act ({legal} legal actions)",
                      env.render().rstrip(), f">>> {agent}: {env.action_name(action)}"]
            shown += 1
        env.step(action)
    lines += ["", f"# The episode ends after {env.engine.num_steps} steps: "
              f"{canonical_json(env.engine.result())}", ""]
    return "\n".join(lines)


# -- files --------------------------------------------------------------------------------------
def _dumps(data: dict[str, Any]) -> str:
    """Two levels indented (kind, case), each case's config and episodes one line each, so a
    diff shows which episodes changed."""
    lines = ["{"]
    kinds = list(data.items())
    for k, (kind, entries) in enumerate(kinds):
        lines.append(f" {json.dumps(kind)}: {{")
        items = list(entries.items())
        for i, (key, entry) in enumerate(items):
            lines.append(f"  {json.dumps(key)}: {{")
            lines.append(f"   \"config\": {canonical_json(entry['config'])},")
            lines.append("   \"episodes\": [")
            eps = entry["episodes"]
            lines += [f"    {canonical_json(ep)}" + ("," if j < len(eps) - 1 else "")
                      for j, ep in enumerate(eps)]
            lines.append("   ]")
            lines.append("  }" + ("," if i < len(items) - 1 else ""))
        lines.append(" }" + ("," if k < len(kinds) - 1 else ""))
    lines.append("}")
    return "\n".join(lines) + "\n"


def recording_files(directory: Path = DIR) -> dict[str, str]:
    """Every recording file's name and content, as the code now plays (the whole set)."""
    by_game: dict[str, dict[str, dict[str, Any]]] = {g: {} for g in GAMES}
    for case in cases():
        by_game[case.game].setdefault(case.kind, {})[case.key] = record(case)
    files = {}
    for game, data in by_game.items():
        files[f"{game}.json"] = _dumps(data)
        files[f"{game}.txt"] = readable(game)
    return files


def load(game: str, directory: Path = DIR) -> dict[str, Any]:
    path = directory / f"{game}.json"
    return json.loads(path.read_text()) if path.exists() else {}


def recorded_cases(directory: Path = DIR) -> set[tuple[str, str, str]]:
    """(kind, game, key) of every recorded case."""
    out = set()
    for path in sorted(directory.glob("*.json")):
        for kind, entries in json.loads(path.read_text()).items():
            out |= {(kind, path.stem, key) for key in entries}
    return out


# -- comparing ----------------------------------------------------------------------------------
def _window(old: dict[str, Any], new: dict[str, Any]) -> tuple[int, int] | None:
    """The steps (first, last) within which two traces of one episode part, or None if every
    step matches (then only the result differs). A checkpoint closes every CHECKPOINT steps
    and the episode's last, shorter window."""
    for i, (a, b) in enumerate(zip(old["checkpoints"], new["checkpoints"], strict=False)):
        if a != b:
            last = min((i + 1) * CHECKPOINT, max(old["steps"], new["steps"])) - 1
            return i * CHECKPOINT, last
    if old["steps"] == new["steps"]:
        return None
    first = min(old["steps"], new["steps"])  # one trace ends where the other goes on
    return first, max(old["steps"], new["steps"]) - 1


def compare(case: Case, recorded: dict[str, Any] | None) -> list[str]:
    """What differs between the recording of ``case`` and the code's play of it: one message
    per differing episode (game, view, variant, seeds, the window where they part, what the
    code now plays there), or none."""
    if recorded is None:
        return [f"{case.name}: no recording; run `{UPDATE}` and commit tests/playthroughs/"]
    current = json.loads(canonical_json(case.config))
    if recorded["config"] != current:
        return [f"{case.name}: recorded with config {recorded['config']}, now {current}; "
                f"run `{UPDATE}`"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        played = case.play()
    messages = []
    if len(played) != len(recorded["episodes"]):
        messages.append(f"{case.name}: {len(recorded['episodes'])} episodes recorded, "
                        f"{len(played)} played")
    for index, (old, new) in enumerate(zip(recorded["episodes"], played, strict=False)):
        if old == new:
            continue
        seeds = (f"reset(seed={new['seed']})" if new["seed"] is not None
                 else "reset() without a seed, after the episode before")
        window = _window(old, new)
        lines = [f"{GAMES[case.game].title} ({case.game}), {case.kind} view, "
                 f"{'variant ' + case.key if case.kind != 'gym' else case.key}, episode "
                 f"{index}: {seeds}, actions from random.Random({new['action_seed']}):"]
        if (old["steps"], old["result"]) != (new["steps"], new["result"]):
            lines.append(f"  recorded {old['steps']} steps, result {old['result']}")
            lines.append(f"  now      {new['steps']} steps, result {new['result']}")
        if window is None:
            lines.append("  every step matches the recording: only the final result() differs")
        else:
            first, last = window
            lines.append(f"  the traces part at a step in {first}..{last} (counted from 0)")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                notes = case.play(keep_notes=True, episodes=EPISODES[:index + 1])
            shown = notes[index]["notes"][first:last + 1]
            if shown:
                lines.append("  what the code now plays there:")
                lines += [f"    {line}" for line in shown]
        messages.append("\n".join(lines))
    if messages:
        messages.append(f"If the change is intended (a rule change, a new encoding), run "
                        f"`{UPDATE}`, then `python -m tests.env_versions` (the game's env "
                        "version changes with it: docs/versioning.md), and explain the change "
                        "in the commit message; otherwise the same seed no longer gives the "
                        "same game.")
    return messages


def check_readable(game: str, directory: Path = DIR) -> list[str]:
    path = directory / f"{game}.txt"
    now = readable(game)
    if not path.exists():
        return [f"{game}: no readable playthrough {path.name}; run `{UPDATE}`"]
    old = path.read_text()
    if old == now:
        return []
    import difflib

    diff = list(difflib.unified_diff(old.splitlines(), now.splitlines(), f"recorded {path.name}",
                                     "now", n=2, lineterm=""))
    return [f"{game}: the readable playthrough changed (run `{UPDATE}` if intended):\n"
            + "\n".join(diff[:60]) + ("\n..." if len(diff) > 60 else "")]


def check_all(directory: Path = DIR) -> Iterator[str]:
    recorded = {g: load(g, directory) for g in GAMES}
    expected = set()
    for case in cases():
        expected.add((case.kind, case.game, case.key))
        yield from compare(case, recorded[case.game].get(case.kind, {}).get(case.key))
    for kind, game, key in sorted(recorded_cases(directory) - expected):
        yield f"stale recording {kind}:{key} in {game}.json (no such case now); run `{UPDATE}`"
    for game in GAMES:
        yield from check_readable(game, directory)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.playthroughs", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--update", action="store_true",
                        help="rewrite the recordings from the code (after an intended change)")
    parser.add_argument("--out", type=Path, default=DIR,
                        help="the recordings' folder (default tests/playthroughs/)")
    args = parser.parse_args(argv)
    if args.update:
        args.out.mkdir(parents=True, exist_ok=True)
        files = recording_files(args.out)
        for stale in {p.name for p in args.out.iterdir() if p.suffix in (".json", ".txt")
                      } - set(files):
            (args.out / stale).unlink()
        for name, text in files.items():
            (args.out / name).write_text(text)
        print(f"wrote {len(files)} files to {args.out}")
        return 0
    problems = list(check_all(args.out))
    for problem in problems:
        print(problem, end="\n\n")
    print("playthroughs match" if not problems else f"{len(problems)} difference(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
