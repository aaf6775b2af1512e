"""The golden playthroughs (tests/playthroughs.py): every recorded seeded game still plays
exactly as recorded, through the AEC, Gymnasium and Dogpile's Parallel env, and every case the
shared tests run has a recording (a new variant cannot skip it, a removed one leaves none).

After an intended change of the games (a rule, an observation encoding, a seeding path):
``python -m tests.playthroughs --update``, and say in the commit message what changed."""

from __future__ import annotations

import pytest

from card_envs.games import GAMES
from tests import playthroughs as pt

CASES = pt.cases()


@pytest.fixture(scope="module")
def recorded() -> dict[str, dict]:
    return {game: pt.load(game) for game in GAMES}


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_playthrough_matches_recording(case: pt.Case, recorded: dict[str, dict]) -> None:
    entry = recorded[case.game].get(case.kind, {}).get(case.key)
    problems = pt.compare(case, entry)
    if problems:
        pytest.fail("\n\n".join(problems), pytrace=False)


@pytest.mark.parametrize("game", list(GAMES))
def test_readable_playthrough_matches(game: str) -> None:
    problems = pt.check_readable(game)
    if problems:
        pytest.fail("\n\n".join(problems), pytrace=False)


def test_every_case_is_recorded_and_no_recording_is_stale() -> None:
    expected = {(c.kind, c.game, c.key) for c in CASES}
    have = pt.recorded_cases()
    missing = sorted(expected - have)
    stale = sorted(have - expected)
    assert not missing and not stale, (
        f"cases without a recording: {missing}; recordings of no current case: {stale}; "
        f"run `{pt.UPDATE}` and commit tests/playthroughs/")
    files = {p.name for p in pt.DIR.iterdir()}
    wanted = {f"{g}.{ext}" for g in GAMES for ext in ("json", "txt")}
    assert files == wanted, f"tests/playthroughs/ holds {sorted(files ^ wanted)} unexpectedly"


def test_the_recordings_cover_every_view_and_variant() -> None:
    """The cases are the shared tests' own variants (tests.conftest), not a list of ours, and
    the episodes are deep enough to pin more than a deal: each game's recorded AEC episodes
    run past the Memory-Uno seats' early calls (the steered choice) and the Gymnasium ones
    reach the learner's decisions."""
    from tests.conftest import VARIANT_IDS

    assert [c.key for c in CASES if c.kind == "aec"] == VARIANT_IDS
    assert {c.game for c in CASES if c.kind == "gym"} == set(GAMES)
    assert {c.game for c in CASES if c.kind == "parallel"} == {
        g for g, s in GAMES.items() if s.parallel}
    for game in GAMES:
        data = pt.load(game)
        for kind, entries in data.items():
            for key, entry in entries.items():
                steps = [ep["steps"] for ep in entry["episodes"]]
                assert len(steps) == len(pt.EPISODES), (kind, key)
                if kind == "aec":
                    assert min(steps) >= 20, f"{kind}:{key} recorded shallow episodes {steps}"
