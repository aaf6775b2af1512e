"""The env-version ledger's check and its tools (docs/versioning.md).

``card_envs/env_versions.json`` records, for each version of each game, a fingerprint of every
golden playthrough case (``tests/playthroughs/<game>.json``: the SHA-256 of its seeded episodes
through the AEC, Gymnasium or Parallel env) and of every env's spaces (observation and action
spaces of each tested variant, read from the code). ``tests/test_playthroughs.py`` holds the
recordings to the code; this module holds the ledger to the recordings and spaces, so a change
of what a seeded game produces, or of a space, cannot land without a new version (or, for a
version no release has shipped, a deliberate ``record`` with a changelog line).

    python -m tests.env_versions                  # check; lists what differs
    python -m tests.env_versions record GAME [--change TEXT] [--options JSON]
    python -m tests.env_versions bump GAME --change TEXT [--options JSON]
    python -m tests.env_versions release X.Y.Z

``record`` takes the recordings into the current version's entry: a new or dropped case (a test
variant added or removed) always; a changed one only while the version is unreleased, with
``--change`` (appended to the entry and to CHANGELOG.md's Unreleased section); ``--options``
replaces the options with which it plays the version it retired (after a further change, the
old ones may no longer do). ``bump`` starts
the next version of a released one: the old one is retired with ``--change`` as its reason (and
``--options``: the new version's options that play the old game, if any), the entry module is
renamed, the ids in tracked files are rewritten (not in :data:`KEEP_OLD_IDS`, which speak of
old versions or of versions in general), and the changelog line is added. ``release`` marks
every unreleased version as shipped in X.Y.Z (after the changelog's section is named so).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
LEDGER = ROOT / "card_envs" / "env_versions.json"
CHANGELOG = ROOT / "CHANGELOG.md"
TOOL = "python -m tests.env_versions"
#: Hex digits kept of each case's fingerprint: a diff of the ledger names the cases that changed.
HEX = 16
#: Tracked files a bump leaves alone: they speak of the versions as they were.
KEEP_OLD_IDS = ("CHANGELOG.md", "docs/results.md", "docs/versioning.md",
                "card_envs/env_versions.json", "card_envs/versions.py", "tests/env_versions.py",
                "tests/test_versions.py")
SEMVER = re.compile(r"(\d+)\.(\d+)\.(\d+)(?:\.dev\d+)?")


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:HEX]


# -- what the code and the recordings show ------------------------------------------------------
def playthrough_prints(game: str) -> dict[str, str]:
    """Each recorded case of ``game`` (``aec:<variant>``, ``gym:<game>-opponent=...``,
    ``parallel:<variant>``): a digest of its config and its episodes' SHA-256s."""
    from tests import playthroughs

    out = {}
    for kind, entries in playthroughs.load(game).items():
        for key, entry in entries.items():
            name = f"{kind}:{game}-{key}" if kind == "gym" else f"{kind}:{key}"
            out[name] = _digest([entry["config"], [ep["sha256"] for ep in entry["episodes"]]])
    return out


def describe_space(space: Any) -> Any:
    """A space as JSON: its kind, shape, dtype and a digest of its bounds."""
    from gymnasium import spaces

    if isinstance(space, spaces.Dict):
        return {key: describe_space(sub) for key, sub in space.spaces.items()}
    if isinstance(space, spaces.Box):
        bounds = np.concatenate([space.low.ravel(), space.high.ravel()]).astype("<f8")
        return ["Box", list(space.shape), str(space.dtype),
                hashlib.sha256(bounds.tobytes()).hexdigest()[:HEX]]
    if isinstance(space, spaces.Discrete):
        return ["Discrete", int(space.n), int(space.start)]
    raise TypeError(f"no description for {type(space).__name__}")


def space_prints(game: str) -> dict[str, str]:
    """Each tested variant's spaces through every view: the AEC env's (per agent), the
    Gymnasium id's default, and the Parallel env's where the game has one."""
    import importlib

    import gymnasium

    from card_envs.games import GAMES
    from tests.conftest import VARIANT_IDS, VARIANTS

    spec = GAMES[game]
    module = importlib.import_module(spec.module)
    out = {}
    for (name, config), vid in zip(VARIANTS, VARIANT_IDS, strict=True):
        if name != game:
            continue
        views = [("aec", module.env(**config))]
        if spec.parallel:
            views.append(("parallel", module.parallel_env(**config)))
        for kind, env in views:
            out[f"{kind}:{vid}"] = _digest({
                agent: [describe_space(env.observation_space(agent)),
                        describe_space(env.action_space(agent))]
                for agent in env.possible_agents})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env = gymnasium.make(spec.gym_id)
    out[f"gym:{game}"] = _digest([describe_space(env.observation_space),
                                  describe_space(env.action_space)])
    env.close()
    return out


# -- the ledger ---------------------------------------------------------------------------------
def load_ledger(path: Path = LEDGER) -> dict[str, list[dict[str, Any]]]:
    data: dict[str, list[dict[str, Any]]] = json.loads(path.read_text())
    return data


def dump_ledger(data: dict[str, list[dict[str, Any]]], path: Path = LEDGER) -> None:
    """One line per case, so a diff of the ledger names the cases and versions that moved."""
    path.write_text(json.dumps(data, indent=1) + "\n")


def _compare(old: dict[str, str], new: dict[str, str]) -> tuple[list[str], list[str], list[str]]:
    """(changed, added, dropped) case names."""
    return (sorted(k for k in old.keys() & new.keys() if old[k] != new[k]),
            sorted(new.keys() - old.keys()), sorted(old.keys() - new.keys()))


def _ids(entry: dict[str, Any], game: str) -> str:
    from card_envs.versions import camel

    return f"card_envs/{camel(game)}-v{entry['version']}"


def changelog_section(name: str, text: str | None = None) -> str | None:
    """The text of CHANGELOG.md's section ``## [name]`` (to the next ``## ``), or None."""
    text = CHANGELOG.read_text() if text is None else text
    match = re.search(rf"^## \[{re.escape(name)}\][^\n]*\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    return match.group(1) if match else None


def problems(game: str, ledger: dict[str, list[dict[str, Any]]] | None = None,
             changelog: str | None = None) -> list[str]:
    """What stands between ``game``'s current recordings and spaces and its ledger entry, and
    between an unreleased version and its changelog lines; empty when they agree."""
    ledger = load_ledger() if ledger is None else ledger
    entry = ledger[game][-1]
    version = _ids(entry, game)
    out = []
    for part, now in (("playthroughs", playthrough_prints(game)),
                      ("spaces", space_prints(game))):
        changed, added, dropped = _compare(entry[part], now)
        if changed and entry["released"] is not None:
            out.append(
                f"{game}: the {part} of {', '.join(changed)} differ from {version}'s, which "
                f"card-envs {entry['released']} shipped: a released version's games and spaces "
                f"are frozen. If the change is intended, start the next version: `{TOOL} bump "
                f"{game} --change '<what changed, for CHANGELOG.md>'` (docs/versioning.md); "
                "a pure speed or refactoring change must leave them as they were.")
        elif changed:
            out.append(
                f"{game}: the {part} of {', '.join(changed)} differ from those recorded for "
                f"{version}, which is not released yet and may take the change: `{TOOL} record "
                f"{game} --change '<what changed, for CHANGELOG.md>'`.")
        if added or dropped:
            out.append(f"{game}: {part} cases {'added ' + ', '.join(added) if added else ''}"
                       f"{'; ' if added and dropped else ''}"
                       f"{'dropped ' + ', '.join(dropped) if dropped else ''} since the ledger "
                       f"was written (a test variant added or removed): `{TOOL} record {game}`.")
    text = CHANGELOG.read_text() if changelog is None else changelog
    if entry["released"] is None:
        section = " ".join((changelog_section("Unreleased", text) or "").split())
        if version not in section:
            out.append(f"{game}: CHANGELOG.md's Unreleased section does not name {version}")
        # Wrapped as the section's lines are wrapped: words in order, any spacing.
        missing = [c for c in entry.get("changes", []) if " ".join(c.split()) not in section]
        if not entry.get("changes") or missing:
            out.append(f"{game}: {version} is unreleased; each change recorded for it must be a "
                       f"line of CHANGELOG.md's Unreleased section (missing: {missing or 'all'})")
    return out


# -- the commands -------------------------------------------------------------------------------
def _changelog_line(line: str, path: Path = CHANGELOG) -> None:
    """Add ``line`` at the top of the Unreleased section's '### Changed' list, wrapped."""
    line = textwrap.fill(line, width=100, subsequent_indent="  ", break_on_hyphens=False,
                         break_long_words=False)
    text = path.read_text()
    section = changelog_section("Unreleased", text)
    if section is None:
        raise SystemExit(f"{path.name} has no '## [Unreleased]' section to add the change to")
    start = text.index("## [Unreleased]")
    head = text.index("\n", start) + 1
    if "### Changed\n" in section:
        head = text.index("### Changed\n", start) + len("### Changed\n")
        text = text[:head] + line + "\n" + text[head:]
    else:
        text = text[:head] + "\n### Changed\n" + line + "\n" + text[head:]
    path.write_text(text)


def _check_options(game: str, options: dict[str, Any]) -> None:
    """The options must be the current code's (game options or the env's own, such as
    ``illegal_action``): making the env with them raises, naming a bad one, otherwise."""
    if options:
        import importlib

        from card_envs.games import GAMES

        importlib.import_module(GAMES[game].module).env(**options).reset(seed=0)


def record(game: str, change: str | None, options: dict[str, Any] | None = None) -> list[str]:
    ledger = load_ledger()
    entry = ledger[game][-1]
    version = _ids(entry, game)
    if options is not None:
        if entry["released"] is not None or len(ledger[game]) < 2:
            raise SystemExit(f"--options says how {version} plays the version it retired: "
                             "only an unreleased version that retired one has them")
        _check_options(game, options)
        ledger[game][-2]["retired"]["options"] = options
        if not options:
            del ledger[game][-2]["retired"]["options"]
    moved = False
    for part, now in (("playthroughs", playthrough_prints(game)),
                      ("spaces", space_prints(game))):
        changed, _, _ = _compare(entry[part], now)
        if changed and entry["released"] is not None:
            raise SystemExit(f"{version} was released in {entry['released']}: its games are "
                             f"frozen; `{TOOL} bump {game} --change ...` starts the next version")
        moved |= bool(changed)
        entry[part] = dict(sorted(now.items()))
    if moved and not change:
        raise SystemExit(f"{version}'s games or spaces changed: say how with --change "
                         "(it becomes its CHANGELOG.md line)")
    if change:
        if entry["released"] is not None:
            raise SystemExit(f"{version} is released; nothing of it can change (bump instead)")
        entry.setdefault("changes", []).append(change)
        _changelog_line(f"- `{version}`: {change}")
    dump_ledger(ledger)
    return [f"recorded {version}" + (f": {change}" if change else "")]


def _tracked_text_files() -> list[Path]:
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                            check=True).stdout.split()
    return [ROOT / name for name in listed if name not in KEEP_OLD_IDS
            and not name.startswith("tests/playthroughs/")
            and Path(name).suffix in (".py", ".md", ".yaml", ".toml", ".txt", ".cfg", ".in")]


def bump(game: str, change: str, options: dict[str, Any]) -> list[str]:
    from card_envs.versions import camel

    ledger = load_ledger()
    old = ledger[game][-1]
    n = old["version"]
    if old["released"] is None:
        raise SystemExit(f"{_ids(old, game)} is not released yet: it takes this change as it is "
                         f"(`{TOOL} record {game} --change ...`), no new version is needed")
    _check_options(game, options)
    old["retired"] = {"why": change, **({"options": options} if options else {})}
    new = {"version": n + 1, "released": None, "changes": [change],
           "playthroughs": dict(sorted(playthrough_prints(game).items())),
           "spaces": dict(sorted(space_prints(game).items()))}
    ledger[game].append(new)
    # The module, the Gymnasium and the PettingZoo name, with or without the namespace.
    renames = [(rf"\b{game}_v{n}\b", f"{game}_v{n + 1}"),
               (rf"\b{camel(game)}-v{n}\b", f"{camel(game)}-v{n + 1}"),
               (rf"\b{game}-v{n}\b", f"{game}-v{n + 1}")]
    source = ROOT / "card_envs" / f"{game}_v{n}.py"
    target = source.with_name(f"{game}_v{n + 1}.py")
    subprocess.run(["git", "mv", str(source), str(target)], cwd=ROOT, check=True)
    touched = []
    for path in _tracked_text_files():
        if not path.is_file():
            continue
        text = path.read_text()
        new_text = text
        for pattern, replacement in renames:
            new_text = re.sub(pattern, replacement, new_text)
        if new_text != text:
            path.write_text(new_text)
            touched.append(str(path.relative_to(ROOT)))
    dump_ledger(ledger)
    ids = f"`{game}_v{n + 1}`, `card_envs/{game}-v{n + 1}`"
    note = ""
    if options:
        note = " (v{} is v{} with {})".format(
            n, n + 1, ", ".join(f"`{k}={v!r}`" for k, v in options.items()))
    _changelog_line(f"- `{_ids(new, game)}` ({ids}) replaces v{n}{note}: {change}")
    return [f"{game}: v{n} retired, v{n + 1} current ({target.relative_to(ROOT)})",
            "ids rewritten in: " + (", ".join(touched) or "nothing"),
            "review the diff, then add what else changed to CHANGELOG.md"]


def release(version: str) -> list[str]:
    import card_envs

    if not SEMVER.fullmatch(version) or ".dev" in version:
        raise SystemExit(f"{version!r} is not a release version X.Y.Z")
    if changelog_section(version) is None:
        raise SystemExit(f"CHANGELOG.md has no '## [{version}] - <date>' section: rename "
                         "Unreleased first (and open a new, empty Unreleased above it)")
    if card_envs.__version__ != version:
        raise SystemExit(f"card_envs.__version__ is {card_envs.__version__}, not {version}")
    ledger = load_ledger()
    done = []
    for game, entries in ledger.items():
        if entries[-1]["released"] is None:
            entries[-1]["released"] = version
            done.append(_ids(entries[-1], game))
    dump_ledger(ledger)
    return [f"released in {version}: {', '.join(done) or 'no new env version'}"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=TOOL, description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command")
    rec = sub.add_parser("record", help="take the recordings into the current version's entry")
    rec.add_argument("game")
    rec.add_argument("--change", help="what changed (an unreleased version only)")
    rec.add_argument("--options", type=json.loads, default=None,
                     help="JSON: replaces the options with which this (unreleased) version "
                          "plays the retired one's rules ({} for none)")
    bmp = sub.add_parser("bump", help="retire the current (released) version, start the next")
    bmp.add_argument("game")
    bmp.add_argument("--change", required=True, help="what the new version changes")
    bmp.add_argument("--options", type=json.loads, default={},
                     help="JSON: the new version's options that play the old game")
    rel = sub.add_parser("release", help="mark the unreleased versions as shipped in X.Y.Z")
    rel.add_argument("version")
    args = parser.parse_args(argv)
    from card_envs.games import GAMES

    if args.command in ("record", "bump") and args.game not in GAMES:
        parser.error(f"unknown game {args.game!r}; games: {', '.join(GAMES)}")
    if args.command == "record":
        lines = record(args.game, args.change, args.options)
    elif args.command == "bump":
        lines = bump(args.game, args.change, args.options)
    elif args.command == "release":
        lines = release(args.version)
    else:
        lines = [p for game in GAMES for p in problems(game)]
        print("\n\n".join(lines) if lines else "the ledger matches every game")
        return 1 if lines else 0
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
