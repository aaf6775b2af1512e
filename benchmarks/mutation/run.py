"""Run the mutation audit: does the test suite notice each plausible bug in the catalog?

    python benchmarks/mutation/run.py                       # the whole catalog
    python benchmarks/mutation/run.py --area roy core       # some areas
    python benchmarks/mutation/run.py --id roy-aces-wrap    # some mutants
    python benchmarks/mutation/run.py --list                # what the catalog holds

Each mutant (``catalog.py``) is one small, plausible bug: a snippet of a source file (``old``,
which must occur exactly once in it) replaced by ``new``. The runner copies the repository's
tracked files (``git ls-files``, as they are in the working tree: ``git add`` a new test file
first) to a temporary directory once, runs the union of the selected mutants' tests there on
the unmutated code (a failing baseline would make every mutant look caught), then, one mutant
at a time per copy, writes the mutated file, runs ``python -m pytest -x -q -p no:cacheprovider
<tests>`` with ``PYTHONPATH`` set to the copy and restores the file. The real working tree is
never written.

``--jobs N`` (default: the cores this process may use) runs N mutants at once, each in its own
copy with its own pytest ``--basetemp``, and the baseline with N xdist workers: a mutant's run
is mostly one busy Python process (imports, then its tests), so N cores do nearly N times the
work (measured below). Rows are printed as mutants finish; the summary is in catalog order.

Verdicts: ``caught`` (a test failed, or the mutant broke collection), ``SURVIVED`` (every test
passed: a gap in the tests, or an equivalent mutant), ``timeout`` (the tests ran past
``--timeout``; counted as detected, since the mutant made them hang, but listed apart) and
``error`` (pytest could not run the selection: a test file or node id in the catalog is gone).
Mutants marked ``equivalent`` (known not to change behaviour) are run and reported apart.

Exit status: 0 when every non-equivalent mutant is detected, 1 when one survived, 2 for a
catalog that no longer fits the code (an ``old`` snippet missing or not unique: the code was
refactored and the entry must be updated), a failing baseline or a pytest ``error``.

Measured: the 300 mutants of the catalog took 14 to 19 minutes one at a time on two shared
cores (the baseline 3 minutes of it, then 2 to 16 s per mutant). Two at a time on the same two
cores, in one session: the training and agents areas (109 mutants) 13 min 30 s -> 7 min 46 s
(1.74x; their tests train with two torch threads each), roy and deluxe_memory (49) 110 -> 52 s.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from queue import SimpleQueue

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.mutation.catalog import AREAS, CATALOG, Mutant  # noqa: E402
from training.selfplay_workers import available_cores  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
DEFAULT_TIMEOUT = 600.0
CAUGHT, SURVIVED, TIMEOUT, ERROR = "caught", "SURVIVED", "timeout", "error"
#: pytest exit codes: 1 tests failed, 2 interrupted (a collection error: the mutant broke an
#: import), 3 internal error, 4 usage error (a file or node id not found), 5 no tests collected.
_CAUGHT_CODES = (1, 2)


class CatalogError(ValueError):
    """The catalog no longer fits the code, or names mutants or areas that do not exist."""


class BaselineError(RuntimeError):
    """The selected tests fail without any mutant: every verdict would be meaningless."""


@dataclass
class Result:
    mutant: Mutant
    verdict: str
    seconds: float
    output: str  # the tail of pytest's output, for survivors and errors


def select(areas: Iterable[str] = (), ids: Iterable[str] = (),
           catalog: Sequence[Mutant] = CATALOG) -> list[Mutant]:
    """The mutants of ``areas`` plus those named in ``ids`` (all of them if both are empty),
    in catalog order."""
    areas, ids = list(areas), list(ids)
    known = {m.id for m in catalog}
    for area in areas:
        if area not in AREAS:
            raise CatalogError(f"unknown area {area!r}; areas: {', '.join(AREAS)}")
    for mid in ids:
        if mid not in known:
            close = difflib.get_close_matches(mid, sorted(known), n=3)
            hint = f" (did you mean {', '.join(close)}?)" if close else ""
            raise CatalogError(f"unknown mutant id {mid!r}{hint}; --list shows them all")
    if not areas and not ids:
        return list(catalog)
    return [m for m in catalog if m.area in areas or m.id in ids]


def check_fits(mutants: Sequence[Mutant], root: Path) -> None:
    """Raise :class:`CatalogError` naming every mutant whose ``old`` snippet does not occur
    exactly once in its file under ``root``: the code changed and the entry must follow it."""
    problems = []
    for m in mutants:
        path = root / m.path
        if not path.is_file():
            problems.append(f"mutant {m.id}: file {m.path} does not exist")
            continue
        count = path.read_text().count(m.old)
        if count != 1:
            where = "does not occur" if count == 0 else f"occurs {count} times"
            problems.append(f"mutant {m.id}: its 'old' snippet {where} in {m.path} "
                            "(expected exactly once)")
    if problems:
        raise CatalogError(
            "the mutation catalog is out of date with the code (refactored since the entries "
            "were written?); update benchmarks/mutation/catalog.py:\n  " + "\n  ".join(problems))


def tracked_files(repo: Path) -> list[str]:
    out = subprocess.run(["git", "ls-files", "-z"], cwd=repo, check=True,
                         capture_output=True).stdout
    return [name for name in out.decode().split("\0") if name]


def copy_tracked(repo: Path, dest: Path) -> None:
    """The tracked files of ``repo`` as they are in its working tree (a file deleted but not
    yet committed is skipped)."""
    for name in tracked_files(repo):
        src = repo / name
        if src.is_file():
            target = dest / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, target)


def selection_files(tests: Iterable[str]) -> list[str]:
    """The files a selection of pytest node ids or files lives in."""
    return [t.split("::", 1)[0] for t in tests]


def run_pytest(root: Path, tests: Sequence[str], timeout: float,
               python: str = sys.executable, workers: int = 1) -> tuple[int | None, float, str]:
    """(pytest's exit code or None on timeout, seconds, output) for ``tests`` run in ``root``
    with ``root`` first on the path, no bytecode written, its temporary files in a folder of
    its own beside ``root`` (concurrent runs share nothing) and ``workers`` xdist workers."""
    env = _child_env(root)
    cmd = [python, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider",
           f"--basetemp={root.parent / (root.name + '-pytest')}", *tests]
    if workers > 1:
        cmd[3:3] = ["-n", str(workers)]
    start = time.monotonic()
    # Its own session, so a timeout (or Ctrl-C here) can end pytest and all its children.
    proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    with _LIVE_LOCK:
        _LIVE.add(proc)
    try:
        out, _ = proc.communicate(timeout=timeout)
        code: int | None = proc.returncode
    except subprocess.TimeoutExpired:
        _kill(proc)
        out, _ = proc.communicate()
        code = None
    except BaseException:
        _kill(proc)
        proc.communicate()
        raise
    finally:
        with _LIVE_LOCK:
            _LIVE.discard(proc)
    return code, time.monotonic() - start, out


#: The pytest processes running now (several with --jobs): a Ctrl-C in the main thread ends
#: them all, since the threads waiting on them do not see it.
_LIVE: set[subprocess.Popen] = set()
_LIVE_LOCK = threading.Lock()


def _kill_live() -> None:
    with _LIVE_LOCK:
        for proc in list(_LIVE):
            _kill(proc)


def _child_env(root: Path) -> dict[str, str]:
    """The environment of the tests: the copy first on the path, no bytecode, and nothing of
    a pytest run this one may itself be part of (an xdist worker's variables)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTEST_XDIST", "PYTEST_CURRENT_TEST"))}
    env.update(PYTHONPATH=str(root), PYTHONDONTWRITEBYTECODE="1")
    return env


def _kill(proc: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError):  # it ended by itself meanwhile
        os.killpg(proc.pid, signal.SIGKILL)


def verdict_of(code: int | None) -> str:
    if code is None:
        return TIMEOUT
    if code == 0:
        return SURVIVED
    return CAUGHT if code in _CAUGHT_CODES else ERROR


def _check_copy_imports(root: Path, python: str) -> None:
    """The tests must import the copy's packages, not an installed (editable) checkout."""
    env = _child_env(root)
    code = ("from importlib.util import find_spec; "  # where they would be imported from
            "print(find_spec('card_envs').origin); print(find_spec('training').origin); "
            # The trainer's installed name, as the tests load it (tests/conftest.py).
            "import training, card_envs.training; print(card_envs.training.__file__)")
    out = subprocess.run([python, "-c", code], cwd=root, env=env, capture_output=True,
                         text=True, check=True).stdout.split()
    outside = [p for p in out if not Path(p).resolve().is_relative_to(root.resolve())]
    if outside:
        raise RuntimeError(f"the copy's packages are shadowed by {outside}: mutants would "
                           "not be tested (is PYTHONPATH or an install hook in the way?)")


def audit(mutants: Sequence[Mutant], repo: Path = REPO, timeout: float = DEFAULT_TIMEOUT,
          python: str = sys.executable, baseline: bool = True,
          report: Callable[[Result], None] | None = None,
          log: Callable[[str], None] | None = None, jobs: int = 1) -> list[Result]:
    """Run every mutant in a temporary copy of ``repo``, ``jobs`` at a time (one copy each);
    ``report`` sees each result as it comes (from the main thread, in the order they finish),
    ``log`` the baseline's. Returns the results in the order of ``mutants``. Raises
    :class:`CatalogError` before running anything if an entry does not fit, and
    :class:`BaselineError` if the selected tests fail on the unmutated copy."""
    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, got {jobs}")
    repo = Path(repo).resolve()
    check_fits(mutants, repo)
    jobs = min(jobs, max(1, len(mutants)))
    with tempfile.TemporaryDirectory(prefix="card-envs-mutation-") as tmp:
        root = Path(tmp) / "repo"
        root.mkdir()
        copy_tracked(repo, root)
        check_fits(mutants, root)  # an entry in a file git does not track would pass above
        _check_copy_imports(root, python)
        roots = [root] + [Path(tmp) / f"repo{i}" for i in range(1, jobs)]
        for other in roots[1:]:
            shutil.copytree(root, other, symlinks=True)
        if baseline:
            union = list(dict.fromkeys(t for m in mutants for t in m.tests))
            code, seconds, out = run_pytest(root, union, timeout * 2, python, workers=jobs)
            if code != 0:
                raise BaselineError("the selected tests fail without any mutant (exit code "
                                    f"{code}); fix them before auditing:\n{_tail(out)}")
            if log is not None:
                log(f"baseline: the selected tests pass without mutants ({seconds:.1f}s)")
        free: SimpleQueue[Path] = SimpleQueue()
        for r in roots:
            free.put(r)

        def one(m: Mutant) -> Result:
            copy = free.get()  # a copy no other mutant is using: each mutant waits for one
            try:
                return _run_mutant(m, copy, timeout, python)
            finally:
                free.put(copy)

        done: dict[str, Result] = {}
        with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="mutant") as pool:
            futures: list[Future[Result]] = [pool.submit(one, m) for m in mutants]
            try:
                for future in as_completed(futures):
                    result = future.result()
                    done[result.mutant.id] = result
                    if report is not None:
                        report(result)
            except BaseException:  # Ctrl-C, or a report that raised: end every pytest now
                for future in futures:
                    future.cancel()
                _kill_live()
                raise
    return [done[m.id] for m in mutants]


def _run_mutant(m: Mutant, root: Path, timeout: float, python: str) -> Result:
    """Apply ``m`` to the copy at ``root``, run its tests there, and put the file back."""
    path = root / m.path
    original = path.read_text()
    try:
        path.write_text(original.replace(m.old, m.new, 1))
        code, seconds, out = run_pytest(root, m.tests, timeout, python)
    finally:
        path.write_text(original)
    verdict = verdict_of(code)
    keep = verdict in (SURVIVED, ERROR)
    return Result(m, verdict, seconds, _tail(out) if keep else "")


def _tail(text: str, lines: int = 15) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:])


# -- reporting -------------------------------------------------------------------------------------
def format_row(r: Result, width: int) -> str:
    note = f"  (equivalent: {r.mutant.equivalent})" if r.mutant.equivalent else ""
    return f"{r.mutant.id:<{width}}  {r.verdict:<8}  {r.seconds:6.1f}s{note}"


def summary(results: Sequence[Result], wall: float) -> str:
    """Per area: caught / survived / timeout / error among the non-equivalent mutants, and
    the equivalent ones apart; then the survivors' ids and the wall time."""
    lines = [f"{'area':<14} {'mutants':>7} {'caught':>6} {'survived':>8} {'timeout':>7} "
             f"{'error':>5} {'equivalent':>10}"]
    areas = [a for a in AREAS if any(r.mutant.area == a for r in results)]
    totals = [0] * 6
    for area in areas:
        rs = [r for r in results if r.mutant.area == area]
        real = [r for r in rs if not r.mutant.equivalent]
        row = [len(rs)] + [sum(r.verdict == v for r in real)
                           for v in (CAUGHT, SURVIVED, TIMEOUT, ERROR)]
        row.append(len(rs) - len(real))
        totals = [t + x for t, x in zip(totals, row, strict=True)]
        lines.append(f"{area:<14} {row[0]:>7} {row[1]:>6} {row[2]:>8} {row[3]:>7} {row[4]:>5} "
                     f"{row[5]:>10}")
    lines.append(f"{'total':<14} {totals[0]:>7} {totals[1]:>6} {totals[2]:>8} {totals[3]:>7} "
                 f"{totals[4]:>5} {totals[5]:>10}")
    for r in results:
        if r.mutant.equivalent:
            lines.append(f"equivalent {r.mutant.id}: {r.verdict} ({r.mutant.equivalent})")
    survivors = [r for r in results if r.verdict == SURVIVED and not r.mutant.equivalent]
    for r in survivors:
        lines.append(f"SURVIVED {r.mutant.id} ({r.mutant.path}): {r.mutant.why}; tests "
                     f"{' '.join(r.mutant.tests)} all passed")
    for r in results:
        if r.verdict == ERROR:
            lines.append(f"ERROR {r.mutant.id}: pytest could not run {' '.join(r.mutant.tests)}:"
                         f"\n{r.output}")
    minutes, seconds = divmod(round(wall), 60)
    lines.append(f"wall time {minutes} min {seconds:02d} s for {len(results)} mutants")
    return "\n".join(lines)


def exit_status(results: Sequence[Result]) -> int:
    if any(r.verdict == SURVIVED and not r.mutant.equivalent for r in results):
        return 1
    return 2 if any(r.verdict == ERROR for r in results) else 0


def list_catalog(mutants: Sequence[Mutant]) -> str:
    lines = []
    for m in mutants:
        mark = f" [equivalent: {m.equivalent}]" if m.equivalent else ""
        lines.append(f"{m.id} ({m.area}, {m.path}){mark}\n    {m.why}\n    tests: "
                     + " ".join(m.tests))
    lines.append(f"{len(mutants)} mutants")
    return "\n".join(lines)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python benchmarks/mutation/run.py",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--area", nargs="+", default=[], choices=AREAS,
                        help="run the mutants of these areas")
    parser.add_argument("--id", nargs="+", default=[], dest="ids", metavar="ID",
                        help="run these mutants (adds to --area)")
    parser.add_argument("--list", action="store_true", help="list the selected mutants and exit")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT,
                        help=f"seconds per mutant's tests (default {DEFAULT_TIMEOUT:.0f})")
    parser.add_argument("--no-baseline", action="store_true",
                        help="skip the run of the selected tests on the unmutated copy")
    parser.add_argument("--jobs", type=_positive_int, default=available_cores(), metavar="N",
                        help="mutants run at once, each in its own copy (default: the cores "
                             f"this process may use, {available_cores()} here)")
    args = parser.parse_args(argv)
    try:
        mutants = select(args.area, args.ids)
    except CatalogError as err:
        parser.error(str(err))
    if args.list:
        print(list_catalog(mutants))
        return 0
    width = max(len(m.id) for m in mutants)
    print(f"{len(mutants)} mutants, {args.jobs} at a time; each row (as it finishes): id, "
          "verdict, seconds of its tests", flush=True)
    start = time.monotonic()
    try:
        results = audit(mutants, REPO, args.timeout, baseline=not args.no_baseline,
                        report=lambda r: print(format_row(r, width), flush=True),
                        log=lambda line: print(line, flush=True), jobs=args.jobs)
    except (CatalogError, RuntimeError) as err:  # a stale entry, a failing baseline
        print(f"error: {err}", file=sys.stderr)
        return 2
    print()
    print(summary(results, time.monotonic() - start))
    return exit_status(results)


if __name__ == "__main__":
    sys.exit(main())
