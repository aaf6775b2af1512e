"""The mutation audit (``benchmarks/mutation``): its catalog fits the code, and its runner's
verdicts are right (a mutant the tests see is caught, one they cannot see survives)."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from benchmarks.mutation import run
from benchmarks.mutation.catalog import AREAS, CATALOG, Mutant

ROOT = Path(__file__).resolve().parents[1]
needs_git = pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(),
                               reason="the runner copies the files git tracks")


def test_catalog_entries_are_well_formed() -> None:
    ids = [m.id for m in CATALOG]
    assert len(ids) == len(set(ids)), "mutant ids must be unique"
    assert {m.area for m in CATALOG} == set(AREAS)
    for m in CATALOG:
        assert m.id and m.why and m.area in AREAS, m.id
        assert m.old and m.old != m.new, m.id
        assert isinstance(m.tests, tuple) and m.tests, m.id
        assert not Path(m.path).is_absolute() and ".." not in Path(m.path).parts, m.id
        assert m.equivalent is None or m.equivalent.strip(), m.id
        for name in run.selection_files(m.tests):
            assert (ROOT / name).is_file(), f"{m.id}: test file {name} does not exist"


def test_every_old_snippet_occurs_exactly_once_in_its_file() -> None:
    run.check_fits(CATALOG, ROOT)  # raises naming every entry that no longer fits


def test_a_stale_entry_is_an_error_naming_the_mutant_and_the_file() -> None:
    entry = CATALOG[0]
    gone = replace(entry, id="stale-gone", old="text that is nowhere in the file")
    twice = replace(entry, id="stale-twice", old="self.")
    with pytest.raises(run.CatalogError) as err:
        run.check_fits([entry, gone, twice], ROOT)
    message = str(err.value)
    assert f"stale-gone: its 'old' snippet does not occur in {entry.path}" in message
    assert "stale-twice: its 'old' snippet occurs" in message and "out of date" in message
    assert f"{entry.id}:" not in message


def test_selection_by_area_and_id() -> None:
    assert run.select() == list(CATALOG)
    roy = run.select(["roy"])
    assert roy and all(m.area == "roy" for m in roy)
    assert run.select(["roy"], [CATALOG[-1].id]) == [*roy, CATALOG[-1]]
    with pytest.raises(run.CatalogError, match="did you mean"):
        run.select(ids=[CATALOG[0].id + "x"])
    with pytest.raises(run.CatalogError, match="unknown area"):
        run.select(["nowhere"])


@needs_git
def test_the_runner_catches_a_real_mutant_and_reports_a_blind_one_as_surviving() -> None:
    caught = next(m for m in CATALOG if m.id == "roy-target-strict")  # its tests take a second
    blind = replace(caught, id="blind", why="tests that never play ROY",
                    tests=("tests/test_core.py::test_card_codes_round_trip_and_tables",))
    before = (ROOT / caught.path).read_text()
    seen: list[run.Result] = []
    results = run.audit([caught, blind], ROOT, timeout=120, report=seen.append)
    assert [r.verdict for r in results] == [run.CAUGHT, run.SURVIVED]
    assert seen == results
    assert run.exit_status(results) == 1
    report = run.summary(results, 7.0)
    assert "SURVIVED blind" in report and "wall time 0 min 07 s" in report
    assert (ROOT / caught.path).read_text() == before  # the working tree is never written


@needs_git
def test_mutants_run_side_by_side_give_the_same_verdicts_in_catalog_order() -> None:
    """--jobs 2: each mutant in its own copy (a mutant written into a copy another mutant is
    running would turn a survivor into a catch); the results come back in the order asked."""
    caught = next(m for m in CATALOG if m.id == "roy-target-strict")
    blind = replace(caught, id="blind", why="tests that never play ROY",
                    tests=("tests/test_core.py::test_card_codes_round_trip_and_tables",))
    # The same file mutated by a mutant the roy tests do not see, beside one they do.
    harmless = replace(caught, id="harmless", new=caught.old)
    mutants = [blind, caught, harmless, replace(blind, id="blind-2")]
    seen: list[run.Result] = []
    results = run.audit(mutants, ROOT, timeout=120, report=seen.append, jobs=2)
    assert [r.mutant.id for r in results] == ["blind", "roy-target-strict", "harmless",
                                              "blind-2"]
    assert [r.verdict for r in results] == [run.SURVIVED, run.CAUGHT, run.SURVIVED,
                                            run.SURVIVED]
    assert sorted(r.mutant.id for r in seen) == sorted(m.id for m in mutants)
    with pytest.raises(ValueError, match="at least 1"):
        run.audit(mutants, ROOT, jobs=0)


def test_the_command_line_refuses_a_job_count_below_one(
        capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        run.main(["--jobs", "0", "--list"])
    assert exit_.value.code == 2 and "--jobs: must be at least 1, got 0" in capsys.readouterr().err


@needs_git
def test_a_failing_baseline_a_missing_test_and_a_hang_are_reported_as_such() -> None:
    entry = next(m for m in CATALOG if m.area == "roy")
    missing = replace(entry, id="missing-test", tests=("tests/test_roy_rules.py::no_such_test",))
    with pytest.raises(run.BaselineError, match="fail without any mutant"):
        run.audit([missing], ROOT, timeout=60)
    hang = Mutant(id="hang", area="roy", path=entry.path, old="HAND_SIZE = 7\n",
                  new="HAND_SIZE = 7\n__import__('time').sleep(600)\n",
                  tests=("tests/test_roy_rules.py",), why="importing ROY hangs")
    errors = run.audit([missing], ROOT, timeout=120, baseline=False)
    assert [r.verdict for r in errors] == [run.ERROR] and "no_such_test" in errors[0].output
    assert run.exit_status(errors) == 2
    hangs = run.audit([hang], ROOT, timeout=1, baseline=False)
    assert [r.verdict for r in hangs] == [run.TIMEOUT] and hangs[0].seconds < 30
    assert run.exit_status(hangs) == 0  # the mutant made the tests hang: it was noticed
