"""Env versions (docs/versioning.md): the ledger holds each game's recorded playthroughs and
spaces, a released version cannot change without a new version, every id and ``metadata["name"]``
follows the ledger, and a retired version's module and ids raise naming the current one."""

from __future__ import annotations

import copy
import importlib
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import gymnasium
import pettingzoo
import pytest

import card_envs
from card_envs import versions
from card_envs.games import GAMES
from card_envs.versions import RetiredEnvError, Version
from tests import env_versions as ev
from tests.test_compiled import build_environment

ROOT = Path(__file__).resolve().parent.parent
RETIRED = [v for vs in versions.VERSIONS.values() for v in vs[:-1]]


@pytest.mark.parametrize("game", list(GAMES))
def test_the_ledger_holds_each_games_recorded_playthroughs_and_spaces(game: str) -> None:
    """The recordings (held to the code by test_playthroughs) and the spaces (read from the
    code) are those recorded for the game's current version; the message says what to run."""
    found = ev.problems(game)
    assert not found, "\n\n".join(found)


def test_every_game_has_a_ledger_entry_and_nothing_else_does() -> None:
    assert set(versions.VERSIONS) == set(GAMES)
    assert set(ev.load_ledger()) == set(GAMES)


def _ledger_with(game: str, change: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    ledger = copy.deepcopy(ev.load_ledger())
    ledger[game][-1].update(change)
    return ledger


def test_a_changed_case_of_a_released_version_asks_for_a_bump() -> None:
    entry = ev.load_ledger()["roy"][-1]
    case = sorted(entry["playthroughs"])[0]
    doctored = _ledger_with("roy", {"released": "0.1.0",
                                    "playthroughs": {**entry["playthroughs"], case: "0" * 16}})
    (message,) = ev.problems("roy", doctored)
    assert f"the playthroughs of {case} differ" in message
    assert f"{ev.TOOL} bump roy --change" in message and "frozen" in message
    space = sorted(entry["spaces"])[0]
    doctored = _ledger_with("roy", {"released": "0.1.0",
                                    "spaces": {**entry["spaces"], space: "0" * 16}})
    (message,) = ev.problems("roy", doctored)
    assert f"the spaces of {space} differ" in message and "bump roy" in message


def test_an_unreleased_version_takes_a_change_with_a_changelog_line() -> None:
    entry = ev.load_ledger()["dogpile"][-1]
    case = sorted(entry["playthroughs"])[-1]
    moved = {**entry["playthroughs"], case: "0" * 16}
    version = f"card_envs/Dogpile-v{entry['version']}"
    changelog = f"## [Unreleased]\n\n### Changed\n- `{version}`: ticks fair\n\n## [0.1.0]\n"
    doctored = _ledger_with("dogpile", {"released": None, "playthroughs": moved,
                                        "changes": ["ticks fair"]})
    (message,) = ev.problems("dogpile", doctored, changelog)
    assert f"{ev.TOOL} record dogpile --change" in message and "not released yet" in message
    # Recorded, it passes with its changelog line, and fails without it.
    doctored["dogpile"][-1]["playthroughs"] = entry["playthroughs"]
    assert ev.problems("dogpile", doctored, changelog) == []
    missing = ev.problems("dogpile", doctored, changelog.replace("ticks fair", "tick"))
    assert missing and "missing: ['ticks fair']" in missing[0]
    doctored["dogpile"][-1]["changes"] = []
    assert any("each change recorded" in p for p in ev.problems("dogpile", doctored, changelog))


def test_an_added_or_dropped_case_asks_for_a_record() -> None:
    entry = ev.load_ledger()["memory_uno"][-1]
    cases = dict(entry["playthroughs"])
    dropped = sorted(cases)[0]
    del cases[dropped]
    cases["aec:memory_uno-gone"] = "0" * 16
    (message,) = ev.problems("memory_uno", _ledger_with("memory_uno", {"playthroughs": cases}))
    assert f"added {dropped}" in message and "dropped aec:memory_uno-gone" in message
    assert f"{ev.TOOL} record memory_uno`" in message


def test_entry_modules_ids_and_env_names_follow_the_ledger() -> None:
    """One file per game's current version and no other; the registries hold the current ids;
    every view's metadata['name'] carries the version (what saved policies record)."""
    modules = {p.stem for p in (ROOT / "card_envs").glob("*_v[0-9]*.py")}
    assert modules == {versions.current(g).name for g in GAMES}
    for game, spec in GAMES.items():
        now = versions.current(game)
        assert (spec.module, spec.gym_id, spec.pz_id) == (now.module, now.gym_id, now.pz_id)
        assert spec.gym_id in gymnasium.registry and spec.pz_id in pettingzoo.aec_registry
        module = importlib.import_module(spec.module)
        assert module.env().metadata["name"] == now.name == f"{game}_v{now.number}"
        made = gymnasium.make(spec.gym_id)
        assert made.unwrapped.metadata["name"] == now.name
        assert made.metadata["render_fps"] > 0  # the class's metadata is kept
        made.close()
        if spec.parallel:
            assert module.parallel_env().metadata["name"] == now.name
            assert pettingzoo.make("parallel", spec.pz_id).metadata["name"] == now.name
        assert pettingzoo.make("aec", spec.pz_id).metadata["name"] == now.name


def test_the_ledger_reader_refuses_what_the_rule_forbids(tmp_path: Path) -> None:
    path = tmp_path / "ledger.json"

    def read(entries: list[dict[str, Any]]) -> None:
        path.write_text(json.dumps({"roy": entries}))
        versions._read(path)

    retired = {"version": 0, "released": "0.1.0", "retired": {"why": "x"}}
    with pytest.raises(ValueError, match="numbered 0, 1"):
        read([{"version": 1, "released": None}])
    with pytest.raises(ValueError, match="must say why it was retired"):
        read([{"version": 0, "released": "0.1.0"}, {"version": 1, "released": None}])
    with pytest.raises(ValueError, match="and the last must not"):
        read([retired])
    with pytest.raises(ValueError, match="retired without a release"):
        read([{**retired, "released": None}, {"version": 1, "released": None}])
    path.write_text(json.dumps({"roy": [retired, {"version": 1, "released": None}]}))
    (old, new) = versions._read(path)["roy"]
    assert (old.retired, new.released, new.gym_id) == ("x", None, "card_envs/Roy-v1")


# -- retired versions ---------------------------------------------------------------------------
@pytest.fixture
def roy_at_v41(monkeypatch: pytest.MonkeyPatch) -> Any:
    """ROY as if v0 to v40 were retired (v40 playable as v41 with draw_when_able) and v41
    current (numbers no entry module has), its retired ids registered as import card_envs
    registers them; the registries restored."""
    table = (*(Version("roy", i, "0.1.0", "older") for i in range(40)),
             Version("roy", 40, "0.2.0", "draws only when no card plays",
                     {"draw_when_able": True}),
             Version("roy", 41, None))
    monkeypatch.setitem(versions.VERSIONS, "roy", table)
    gym_before = dict(gymnasium.registry)
    aec_before = dict(pettingzoo.aec_registry)
    from card_envs.core.registration import register_retired

    register_retired()
    yield table[40]
    for registry, before in ((gymnasium.registry, gym_before),
                             (pettingzoo.aec_registry, aec_before)):
        for key in set(registry) - set(before):
            del registry[key]
    sys.modules.pop("card_envs.roy_v40", None)


def _says_where_it_went(err: pytest.ExceptionInfo[RetiredEnvError], asked: str,
                        current: str) -> str:
    text = str(err.value)
    assert text.startswith(f"{asked} is retired") and f"plays roy as {current}" in text
    assert "CHANGELOG.md, section 0.2.0, 'card_envs/Roy-v41'" not in text  # v40 shipped in 0.2.0
    assert "CHANGELOG.md, section Unreleased, 'card_envs/Roy-v41'" in text
    assert "draws only when no card plays" in text
    assert "v40's rules are v41's with draw_when_able=True" in text
    return text


def test_a_retired_module_raises_naming_the_current_module(roy_at_v41: Version) -> None:
    with pytest.raises(RetiredEnvError) as err:
        importlib.import_module("card_envs.roy_v40")
    _says_where_it_went(err, "card_envs.roy_v40", "card_envs.roy_v41")
    with pytest.raises(ImportError, match="card_envs.roy_v40 is retired"):
        from card_envs import roy_v40  # noqa: F401
    with pytest.raises(ImportError, match="card_envs.roy_v40 is retired"):
        exec("import card_envs.roy_v40")
    # A module file answers before the finder (the real current one, retired in this table);
    # a name that never was a version fails as before.
    assert callable(importlib.import_module(GAMES["roy"].module).env)
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("card_envs.roy_v70")


def test_a_retired_gymnasium_id_raises_our_message_not_gymnasiums(roy_at_v41: Version) -> None:
    """Gymnasium answers an unregistered old version with its own DeprecatedEnv ('Please use
    ... instead'); ours is registered, so its message (what changed, which options) wins."""
    with pytest.raises(gymnasium.error.DeprecatedEnv) as err:
        gymnasium.make("card_envs/Roy-v40")
    assert isinstance(err.value, RetiredEnvError)
    _says_where_it_went(err, "card_envs/Roy-v40", "card_envs/Roy-v41")
    with pytest.raises(RetiredEnvError, match="card_envs/Roy-v40 is retired"):
        gymnasium.make("card_envs:card_envs/Roy-v40", num_players=3)


def test_a_retired_pettingzoo_id_raises_naming_the_current_id(roy_at_v41: Version) -> None:
    with pytest.raises(RetiredEnvError) as err:
        pettingzoo.make("aec", "card_envs/roy-v40")
    _says_where_it_went(err, "card_envs/roy-v40", "card_envs/roy-v41")


@pytest.mark.parametrize("version", RETIRED, ids=[f"{v.game}-v{v.number}" for v in RETIRED])
def test_each_retired_version_answers_every_way_it_can_be_asked(version: Version) -> None:
    """The real ledger's retired versions: module, Gymnasium and PettingZoo ids all raise
    naming the current id and the changelog section; the options they name are accepted by the
    current version, and the changelog names the version that retired them."""
    now = versions.current(version.game)
    successor = versions.VERSIONS[version.game][version.number + 1]
    def gym_make() -> Any:
        # Gymnasium warns first that a newer version is registered; our error follows.
        with pytest.warns(DeprecationWarning, match=f"{version.gym_id} is out of date"):
            return gymnasium.make(version.gym_id)

    asks = [(lambda: importlib.import_module(version.module), version.module, now.module),
            (gym_make, version.gym_id, now.gym_id),
            (lambda: pettingzoo.make("aec", version.pz_id), version.pz_id, now.pz_id)]
    for make, asked, current in asks:
        with pytest.raises(RetiredEnvError) as err:
            make()
        text = str(err.value)
        assert text.startswith(f"{asked} is retired") and current in text
        assert f"section {successor.section}, '{successor.gym_id}'" in text
        assert version.retired and version.retired in text and successor.what_changed in text
    section = ev.changelog_section(successor.section)
    assert section is not None and successor.gym_id in section
    if version.options:
        importlib.import_module(now.module).env(**version.options).reset(seed=0)


# -- the changelog and the package version ------------------------------------------------------
def test_the_package_version_and_the_changelog_agree() -> None:
    """Semantic versioning: X.Y.Z, with .devN while the Unreleased section is written; every
    release a version was shipped in has a dated section; nothing is shipped in a release
    newer than the package."""
    match = ev.SEMVER.fullmatch(card_envs.__version__)
    assert match, card_envs.__version__
    ours = tuple(int(x) for x in match.groups())
    text = ev.CHANGELOG.read_text()
    sections = re.findall(r"^## \[([^\]]+)\](?: - (\d{4}-\d{2}-\d{2}))?$", text, re.M)
    assert sections[0] == ("Unreleased", ""), "the changelog opens with [Unreleased]"
    dated = {name: date for name, date in sections[1:]}
    assert all(dated.values()), f"every release section is dated: {dated}"
    shipped = {v.released for vs in versions.VERSIONS.values() for v in vs if v.released}
    assert shipped <= set(dated)
    for release in shipped:
        assert tuple(int(x) for x in release.split(".")) <= ours
    if ".dev" in card_envs.__version__:
        assert card_envs.__version__.split(".dev")[0] not in dated, "a released number as .dev"


def test_bump_retires_the_version_everywhere(tmp_path: Path) -> None:
    """``bump`` in a copy of the checkout: ROY's v1 module replaces v0's, the ids in tracked
    files follow, the ledger and CHANGELOG.md gain the entry, and the copy's check passes and
    its old ids raise naming the new ones (a second bump is refused until a release)."""
    copy_root = tmp_path / "repo"
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"],
                            cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    for name in listed:
        if (ROOT / name).is_file():
            (copy_root / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, copy_root / name)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q"], cwd=copy_root, check=True)
    subprocess.run([*git, "add", "-A"], cwd=copy_root, check=True)
    env = build_environment(pure=True)
    env["PYTHONPATH"] = str(copy_root)

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, *args], cwd=copy_root, env=env,
                              capture_output=True, text=True, timeout=300)

    # A release first (the current versions may be unreleased, and only a released one bumps).
    changelog_path = copy_root / "CHANGELOG.md"
    changelog_path.write_text(changelog_path.read_text().replace(
        "## [Unreleased]\n", "## [Unreleased]\n\n## [9.0.0] - 2030-01-01\n", 1))
    init = copy_root / "card_envs/__init__.py"
    init.write_text(re.sub(r'__version__ = "[^"]+"', '__version__ = "9.0.0"', init.read_text()))
    released = run("-m", "tests.env_versions", "release", "9.0.0")
    assert released.returncode == 0, released.stdout + released.stderr
    ledger = json.loads((copy_root / "card_envs/env_versions.json").read_text())
    assert all(entries[-1]["released"] for entries in ledger.values())
    number = versions.current("roy").number
    old, new = f"roy_v{number}", f"roy_v{number + 1}"
    done = run("-m", "tests.env_versions", "bump", "roy", "--change", "forced draws shown",
               "--options", '{"draw_when_able": true}')
    assert done.returncode == 0, done.stdout + done.stderr
    assert not (copy_root / f"card_envs/{old}.py").exists()
    assert f"from card_envs import {new}" in (copy_root / f"card_envs/{new}.py").read_text()
    assert f"card_envs.{new}" in (copy_root / "README.md").read_text()
    assert f"card_envs/Roy-v{number + 1}" in (copy_root / "README.md").read_text()
    changelog = (copy_root / "CHANGELOG.md").read_text()
    assert changelog.count(f"card_envs/Roy-v{number}") == ev.CHANGELOG.read_text().count(
        f"card_envs/Roy-v{number}")  # the history keeps the old ids
    section = ev.changelog_section("Unreleased", changelog)
    assert section and f"`card_envs/Roy-v{number + 1}` (`{new}`" in section
    assert "forced draws shown" in section and "`draw_when_able=True`" in section
    check = run("-m", "tests.env_versions")
    assert check.returncode == 0, check.stdout
    probe = run("-c", "import card_envs, gymnasium\n"
                f"try: gymnasium.make('card_envs/Roy-v{number}')\n"
                "except card_envs.versions.RetiredEnvError as e: print(e)\n"
                f"from card_envs import {new}; print({new}.env().metadata['name'])")
    assert probe.returncode == 0, probe.stderr
    assert f"card_envs/Roy-v{number + 1}" in probe.stdout and "forced draws shown" in probe.stdout
    assert "with draw_when_able=True" in probe.stdout and probe.stdout.endswith(f"{new}\n")
    again = run("-m", "tests.env_versions", "bump", "roy", "--change", "more")
    assert again.returncode != 0 and "not released yet" in again.stderr
    # The unreleased version takes a further change, and its retired-options claim is replaced.
    bad = run("-m", "tests.env_versions", "record", "roy", "--options", '{"nope": 1}')
    assert bad.returncode != 0 and "nope" in bad.stderr
    more = run("-m", "tests.env_versions", "record", "roy", "--change", "infos fixed",
               "--options", "{}")
    assert more.returncode == 0, more.stdout + more.stderr
    ledger = json.loads((copy_root / "card_envs/env_versions.json").read_text())["roy"]
    assert ledger[-2]["retired"] == {"why": "forced draws shown"}
    assert ledger[-1]["changes"] == ["forced draws shown", "infos fixed"]
    section = ev.changelog_section("Unreleased", (copy_root / "CHANGELOG.md").read_text())
    assert section and f"- `card_envs/Roy-v{number + 1}`: infos fixed" in section
    assert run("-m", "tests.env_versions").returncode == 0


def test_a_saved_env_name_of_an_older_version_says_what_changed_since(roy_at_v41: Version) -> None:
    """What a saved policy's recorded ``metadata["name"]`` tells a loader for another version:
    each change since, with its changelog section."""
    note = versions.name_change("roy_v39", "roy_v41")
    assert note == ("roy changed since roy_v39: v40 (CHANGELOG.md, section 0.2.0): older; "
                    "v41 (CHANGELOG.md, section Unreleased): draws only when no card plays")
    assert versions.name_change("roy_v40", "roy_v41") == (
        "roy changed since roy_v40: v41 (CHANGELOG.md, section Unreleased): draws only when no "
        "card plays")
    for saved, now in (("roy_v41", "roy_v40"), ("roy_v41", "roy_v41"), ("dogpile_v0", "roy_v41"),
                       ("roy_v40", "roy_v90"), ("roy", "roy_v41")):
        assert versions.name_change(saved, now) is None, (saved, now)
