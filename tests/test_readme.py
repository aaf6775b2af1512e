"""The docs match the code: the documented sizes (README.md's and docs/games/index.md's games
tables, each entry module's docstring), each RULES.md's observation fields, actions and
options, and the figures the pages give are the envs' real ones. The examples themselves are
run by tests/test_docs_examples.py."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
DOCS = README.parent / "docs"
GAMES_MD = DOCS / "games" / "index.md"
GETTING_STARTED_MD = DOCS / "getting-started.md"
DEVELOPMENT_MD = DOCS / "development.md"


def _formula(text: str, n: int) -> int:
    """Evaluate a documented size such as ``8n² + 148n + 58`` for ``n`` players."""
    expr = re.sub(r"(\d)n", r"\1*n", text.replace("n²", "n**2"))
    if not re.fullmatch(r"[\d\sn*+]+", expr):
        raise AssertionError(f"not a size formula: {text!r}")
    return int(eval(expr, {"__builtins__": {}}, {"n": n}))


def _player_counts(game: str) -> tuple[int, ...]:
    from card_envs.games import GAMES

    return tuple(GAMES[game].engine_class().OPTIONS["num_players"].choices)


def _table_rows(path: Path) -> list[list[str]]:
    return [[cell.strip() for cell in line.strip().strip("|").split("|")]
            for line in path.read_text().splitlines() if line.startswith("| ")]


#: game | module | Gymnasium id | players | actions | observation | ... (README: rules; the
#: games page: main options)
GAME_ROWS = _table_rows(README)
INDEX_ROWS = _table_rows(GAMES_MD)


@pytest.mark.parametrize("game", ["roy", "mega_memory", "memory_uno", "deluxe_memory", "dogpile"])
def test_documented_sizes_match_the_envs(game: str) -> None:
    """The README's and the games page's tables and each module's docstring give the real
    action and observation sizes for every supported player count: users size their networks
    from them."""
    import importlib

    from card_envs.games import GAMES

    module = importlib.import_module(GAMES[game].module)
    rows = [next(r for r in table if r[1].startswith(f"`{GAMES[game].module}`"))
            for table in (GAME_ROWS, INDEX_ROWS)]
    shape = re.search(r'"observation": \(([^,]+),\), "action_mask": \(([^,]+),\)',
                      module.__doc__ or "")
    assert shape, f"{game}: no observation shape line in the module docstring"
    for n in _player_counts(game):
        env = module.raw_env(num_players=n)
        obs_size = env.observation_space("player_0")["observation"].shape[0]
        num_actions = env.action_space("player_0").n
        for row in rows:
            assert _formula(row[5], n) == obs_size, (game, n, row[5])
            assert _formula(row[4], n) == num_actions, (game, n, row[4])
        assert _formula(shape.group(1), n) == obs_size, (game, n, shape.group(1))
        assert _formula(shape.group(2), n) == num_actions, (game, n, shape.group(2))


@pytest.mark.parametrize("game", ["roy", "mega_memory", "memory_uno", "deluxe_memory", "dogpile"])
def test_rules_md_documents_every_observation_field(game: str) -> None:
    """Each RULES.md's Observation section names every field of the layout (and, where its
    heading gives the size, gives the real one): a field added to an engine must be documented
    where users look up what an input means."""
    from card_envs.games import make_engine

    text = (README.parent / "card_envs" / "games" / game / "RULES.md").read_text()
    section = re.search(r"^## Observation.*?(?=^## |\Z)", text, flags=re.S | re.M)
    assert section, f"{game}: RULES.md has no '## Observation' section"
    body = section.group(0)
    engine = make_engine(game)
    missing = [name for name in engine.layout.slices if not re.search(rf"\b{name}\b", body)]
    assert not missing, f"{game}: RULES.md's Observation section does not name {missing}"
    # In the vector's order: a reader slices the observation by the table (Mega Mem-Ory's once
    # listed two 52-float blocks swapped).
    named = list(dict.fromkeys(name for name in re.findall(r"`(\w+)`", body)
                               if name in engine.layout.slices))
    assert named == list(engine.layout.slices), (
        f"{game}: RULES.md's Observation section names the fields in another order than the "
        f"observation holds them: {named} vs {list(engine.layout.slices)}")
    size = re.match(r"## Observation \((?:float32, )?([\dn²+ ]+?) (?:floats|values)", body)
    if size:
        for n in _player_counts(game):
            layout = make_engine(game, num_players=n).layout
            assert _formula(size.group(1), n) == layout.size, (game, n, size.group(1))


def _table_size(text: str, n: int) -> int:
    """A RULES.md table size such as ``4 x 52``, ``(n-1) x 3 x 19``, ``18(n-1)`` or ``8n²``
    for ``n`` players."""
    expr = text.replace("n²", "n**2").replace(" x ", " * ")
    expr = re.sub(r"(\d)\s*(?=[n(])", r"\1*", expr)
    if not re.fullmatch(r"[\d\sn*+()-]+", expr):
        raise AssertionError(f"not a size: {text!r}")
    return int(eval(expr, {"__builtins__": {}}, {"n": n}))


def _observation_rows(game: str) -> list[tuple[list[str], str]]:
    """The rows of RULES.md's Observation table: (field names, size text)."""
    text = (README.parent / "card_envs" / "games" / game / "RULES.md").read_text()
    section = re.search(r"^## Observation.*?(?=^## |\Z)", text, flags=re.S | re.M)
    assert section, f"{game}: RULES.md has no '## Observation' section"
    rows = []
    for line in section.group(0).splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| `") and len(cells) >= 3:
            rows.append((re.findall(r"`(\w+)`", cells[0]), cells[1]))
    return rows


@pytest.mark.parametrize("game", ["roy", "mega_memory", "memory_uno", "deluxe_memory", "dogpile"])
def test_rules_md_observation_table_is_the_layout_with_sizes(game: str) -> None:
    """Issue 38: RULES.md's Observation table names every field of the env's
    ``observation_layout()`` in its order, each with its size, for every player count. A row
    of several fields gives one size ``each``, one term per field (``1 + 1``), or their total."""
    from card_envs.games import make_engine

    rows = _observation_rows(game)
    assert rows, f"{game}: no field table"
    for n in _player_counts(game):
        fields = make_engine(game, num_players=n).layout.fields()
        documented = [name for names, _ in rows for name in names]
        assert documented == list(fields), (game, n, documented)
        for names, size in rows:
            sizes = [fields[name].slice.stop - fields[name].slice.start for name in names]
            if size.endswith(" each"):
                expected = [_table_size(size.removesuffix(" each"), n)] * len(names)
            elif len(names) > 1 and len(terms := size.split(" + ")) == len(names):
                expected = [_table_size(t, n) for t in terms]
            else:
                expected, sizes = [_table_size(size, n)], [sum(sizes)]
            assert sizes == expected, (game, n, names, size)


@pytest.mark.parametrize("game", ["roy", "mega_memory", "memory_uno", "deluxe_memory", "dogpile"])
def test_rules_md_documents_every_action_family(game: str) -> None:
    """Each RULES.md's Actions section names every kind of action (``play`` of ``play:TH``)
    and gives the real number of actions for every player count."""
    from card_envs.games import make_engine

    text = (README.parent / "card_envs" / "games" / game / "RULES.md").read_text()
    section = re.search(r"^## Actions \((?:Discrete\()?([\dn+ ]+)\)?[;)].*?(?=^## |\Z)", text,
                        flags=re.S | re.M)
    assert section, f"{game}: RULES.md has no '## Actions (<count>)' section"
    families = {name.split(":")[0] for name in make_engine(game).action_names}
    missing = sorted(f for f in families if not re.search(rf"\b{f}\b", section.group(0)))
    assert not missing, f"{game}: RULES.md's Actions section does not name {missing}"
    for n in _player_counts(game):
        assert _formula(section.group(1), n) == make_engine(game, num_players=n).num_actions


@pytest.mark.parametrize("game", ["roy", "mega_memory", "memory_uno", "deluxe_memory", "dogpile"])
def test_every_game_option_is_documented(game: str) -> None:
    """Each option a game's config accepts is explained in its RULES.md and listed in the games
    page's table (``num_players`` has its own column there)."""
    from card_envs.games import GAMES

    text = (README.parent / "card_envs" / "games" / game / "RULES.md").read_text()
    row = next(r for r in INDEX_ROWS if r[1].startswith(f"`{GAMES[game].module}`"))
    options = GAMES[game].engine_class().OPTIONS
    assert [o for o in options if not re.search(rf"`{o}\b", text)] == []
    assert [o for o in options if o != "num_players" and f"`{o}`" not in row[6]] == []


TRAINING_MD = README.parent / "docs" / "training.md"


def test_training_md_gives_the_trainers_ppo_defaults() -> None:
    """docs/training.md gives the ``ppo`` values a run uses for keys a config leaves out: the
    trainer's, not MaskablePPO's own (a user sizing a rollout from the docs must get the values
    a run uses). tests/test_training.py holds the key table's other defaults."""
    from training import yaml12
    from training.config import PPO_DEFAULTS

    text = TRAINING_MD.read_text()
    para = re.search(r"A `ppo` key left out.*?\n\n", text, flags=re.S)
    assert para, "docs/training.md does not give the trainer's ppo defaults"
    documented = {k: yaml12.load(v) for k, v in
                  re.findall(r"`(\w+): ([^`{]+)`", para.group(0))}
    assert documented == {k: v for k, v in PPO_DEFAULTS.items() if k != "policy_kwargs"}
    assert f"`{{net_arch: {PPO_DEFAULTS['policy_kwargs']['net_arch']}}}`" in para.group(0)


def test_docs_name_the_games_with_derived_features() -> None:
    """The layout (docs/development.md), the games page and docs/training.md name exactly the
    games that have a features.py (``features: derived``), not "the memory games" (Memory-Uno
    has none)."""
    from card_envs.games import GAMES

    with_features = {spec.title for spec in GAMES.values() if spec.features}
    layout = " ".join(DEVELOPMENT_MD.read_text().split())
    games = " ".join(GAMES_MD.read_text().split())
    training = " ".join(TRAINING_MD.read_text().split())
    for text, pattern in ((layout, r"derived policy inputs, for ([^)]*)\)"),
                          (games, r"Games with derived policy features: ([^(.]*?) ?[(.]"),
                          (training, r"Games with derived features: ([^(.]*?) ?[(.]")):
        found = re.search(pattern, text)
        assert found, pattern
        names = {n.strip() for n in re.split(r",| and ", found.group(1)) if n.strip()}
        # "Mega Mem-Ory" stands for "Mega Mem-Ory Ultima-Ory".
        matched = {t for t in with_features for n in names if t.startswith(n)}
        assert len(names) == len(with_features) and matched == with_features, (pattern, names)


def test_train_and_dev_extras_run_the_tests() -> None:
    """Getting started: ``.[train,dev]`` installs what the tests import (``.[dev]`` alone does not:
    they import torch, SB3 and ``training``); what else they import, they skip without."""
    import ast
    import sys
    from importlib.metadata import packages_distributions

    tomllib = pytest.importorskip("tomllib")  # Python 3.11+

    project = tomllib.loads((README.parent / "pyproject.toml").read_text())["project"]
    wanted = project["dependencies"] + sum((project["optional-dependencies"][x]
                                            for x in ("train", "dev")), [])
    allowed = {re.split(r"[<>=!~\[ ;]", r, maxsplit=1)[0].lower().replace("_", "-")
               for r in wanted}
    dists = packages_distributions()
    local = {"card_envs", "training", "tests", "benchmarks"}
    missing = set()
    for path in (README.parent / "tests").glob("*.py"):
        source = path.read_text()
        skipped = set(re.findall(r"importorskip\(\"(\w+)\"", source))
        for node in ast.walk(ast.parse(source)):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module] if isinstance(node, ast.ImportFrom) and node.level == 0
                     else [])
            for top in {n.split(".")[0] for n in names if n}:
                if top in sys.stdlib_module_names or top in local or top in skipped:
                    continue
                owners = {d.lower().replace("_", "-") for d in dists.get(top, [top])}
                if not owners & allowed:
                    missing.add(f"{path.name}: {top}")
    assert not missing, sorted(missing)


#: Seeded resets per opponent kind for the documented redeal figures: enough that a figure off
#: by more than the tolerance below (about three standard errors) is a real change.
REDEAL_RESETS = {"memory_uno": 5000}


@pytest.mark.parametrize("game", ["roy", "mega_memory", "memory_uno", "deluxe_memory", "dogpile"])
def test_docs_give_the_share_of_deals_the_gym_env_throws_away(game: str) -> None:
    """docs/getting-started.md's figures for the deals the Gymnasium env deals again
    (``info["redeals"]``: the episode ended before the learner's first decision), which win
    rates measured through that env leave out: 4-player Memory-Uno's with random and with
    heuristic opponents and a random learner seat, and none in the other games."""
    from card_envs.core.gym_env import CardGymEnv

    text = " ".join(GETTING_STARTED_MD.read_text().split())
    found = re.search(r"([\d.]+)% of 4-player Memory-Uno deals with random opponents and a "
                      r"random learner seat, ([\d.]+)% with heuristic ones, none in the other "
                      r"games", text)
    assert found, "docs/getting-started.md no longer gives the Gym env's redeal figures"
    documented = {"random": float(found.group(1)), "heuristic": float(found.group(2))}
    tolerance = {"random": 1.7, "heuristic": 0.5}  # percentage points
    resets = REDEAL_RESETS.get(game, 1000)
    for opponent in ("random", "heuristic"):
        env = CardGymEnv(game, opponent=opponent, learner_seat="random")
        redeals = sum(env.reset(seed=seed)[1]["redeals"] for seed in range(resets))
        if game != "memory_uno":
            assert redeals == 0, (game, opponent, redeals)
            continue
        share = 100 * redeals / (redeals + resets)
        assert abs(share - documented[opponent]) <= tolerance[opponent], (opponent, share)


ARCHITECTURE_MD = README.parent / "docs" / "architecture.md"


def test_architecture_md_names_what_the_code_has() -> None:
    """docs/architecture.md is what a game's author follows: every name it gives in code quotes
    (an engine member, a tracker event, a registry or test-suite name, an option) exists where
    it says, and its registration step gives the ids and entry modules the registry makes."""
    import builtins
    import importlib

    from benchmarks.mutation import catalog
    from card_envs import compiled, dogpile_v1, roy_v1
    from card_envs.core import (
        action_names,
        cards,
        config,
        conventions,
        engine,
        obs_layout,
        registration,
    )
    from card_envs.core.knowledge import KnowledgeTracker
    from card_envs.games import GAMES, make_engine
    from card_envs.versions import current
    from tests import steer, test_api_all_games

    game = make_engine("roy")
    game.reset(seed=0)
    aec = roy_v1.env()
    aec.reset(seed=0)
    # What the conventions section cites of PettingZoo and Gymnasium.
    from gymnasium.utils import env_checker
    from pettingzoo import AECEnv
    from pettingzoo import test as pettingzoo_test
    from pettingzoo.utils import wrappers

    namespaces = [
        game, aec, conventions, AECEnv, pettingzoo_test, wrappers, env_checker,
        engine.Engine, engine.CachedViewsEngine, KnowledgeTracker(2, 1),
        obs_layout.ObsLayout, cards, config, engine, registration, compiled, action_names,
        dogpile_v1,
        test_api_all_games, steer, builtins,
        importlib.import_module("card_envs.games"), *catalog.CATALOG[:1], catalog,
        *(importlib.import_module(GAMES[g].engine.split(":")[0]) for g in GAMES),
        *(spec.engine_class() for spec in GAMES.values()),
        # What "What we guarantee" cites: the schema, the run's files and lock, policies.
        *(importlib.import_module(m) for m in (
            "card_envs.core.snapshot_specs", "card_envs.agents", "card_envs.agents.provenance",
            "training.files", "training.run_lock", "training.train", "training.actors", "os")),
    ]
    known = {n for ns in namespaces for n in dir(ns)} | set(game.config) | set(GAMES)
    # Parameter names from the source, the same whichever build runs.
    tree = ast.parse(compiled.source_path("card_envs.core.engine").read_text())
    known |= set(catalog.AREAS) | {a.arg for node in ast.walk(tree)
                                   if isinstance(node, ast.FunctionDef)
                                   for a in node.args.args + node.args.kwonlyargs}
    text = ARCHITECTURE_MD.read_text()
    names = {m.group(1) for m in re.finditer(
        r"`(?:self\.|tracker\.|env\.)?([A-Za-z_]\w*)(?:\([^`]*\))?(?:\[[^`]*\])?`", text)}
    assert len(names) > 50, "the pattern no longer finds the names"
    assert sorted(names - known) == [], sorted(names - known)
    # Step 3: what one _spec line registers.
    steps = text.split("## Adding a game", 1)[1].split("## The engine contract")[0]
    steps = " ".join(steps.split())
    assert ("registers the PettingZoo id `card_envs/<game>-v0` and the Gymnasium id "
            "`card_envs/<Camel>-v0`; the engine's `name` must be `\"<game>\"`") in steps
    for name, spec in GAMES.items():
        n = current(name).number  # a new game starts at v0 (docs/versioning.md)
        camel = spec.gym_id.removeprefix("card_envs/").removesuffix(f"-v{n}")
        assert spec.pz_id == f"card_envs/{name}-v{n}" and camel.lower() == name.replace("_", "")
        assert spec.module == f"card_envs.{name}_v{n}" and spec.engine_class().name == name
        assert (README.parent / "configs" / f"{name}.yaml").is_file()
        module = importlib.import_module(spec.module)
        assert callable(module.env) and callable(module.raw_env) and callable(module.gym_env)


@pytest.mark.parametrize("game", ["roy", "mega_memory", "memory_uno", "deluxe_memory", "dogpile"])
def test_entry_module_docstrings_usage_runs_and_names_every_option(game: str) -> None:
    """Each ``card_envs/<game>_v<N>.py`` docstring (PettingZoo's env card): its Usage example
    runs as written, and its Variants row names every option of the game."""
    import importlib

    from card_envs.games import GAMES

    doc = importlib.import_module(GAMES[game].module).__doc__ or ""
    usage = doc.split("Usage::", 1)[1]
    code = "\n".join(line[4:] for line in usage.splitlines() if line.strip())
    namespace: dict = {}
    exec(compile(code, f"{GAMES[game].module} usage", "exec"), namespace)
    namespace["env"].reset(seed=0)
    variants = re.search(r"^\| Variants \| (.*) \|$", doc, flags=re.M)
    assert variants, f"{game}: no Variants row"
    options = GAMES[game].engine_class().OPTIONS
    single = [o for o, opt in options.items() if opt.choices is not None and len(opt.choices) == 1]
    assert [o for o in options if o not in single and f"`{o}`" not in variants.group(1)] == []


#: The pages a newcomer copies ids from (docs/versioning.md, results.md and CHANGELOG.md name
#: retired versions on purpose).
NEWCOMER_PAGES = [README, *(README.parent / "docs" / name for name in (
    "index.md", "getting-started.md", "cli.md", "training.md", "evaluation.md", "scaling.md",
    "search.md"))]


@pytest.mark.parametrize("page", NEWCOMER_PAGES, ids=lambda p: p.name)
def test_the_env_ids_and_modules_a_page_names_are_current(page: Path) -> None:
    """An id or entry module of a retired version raises RetiredEnvError: a page that names
    one (the README's PettingZoo id stayed at v0 when the games moved to v1) fails its reader
    on the first line they copy."""
    from card_envs.games import GAMES

    text = page.read_text(encoding="utf-8")
    current = {i for spec in GAMES.values() for i in (spec.gym_id, spec.pz_id, spec.module)}
    named = set(re.findall(r"card_envs/[A-Za-z_]+-v\d+", text)) | {
        f"card_envs.{m}" for m in re.findall(r"\b([a-z_]+_v\d+)\b", text)}
    assert sorted(named - current) == []
