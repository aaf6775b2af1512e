#!/usr/bin/env bash
# The RL libraries our users bring, each for real in its own virtualenv (`make test-marl`):
#   bash .ci/libraries.sh [torchrl tianshou agilerl supersuit pettingzoo-lowest rllib rllib-cluster]
# A step's virtualenv holds torch==2.13.0 (installed first, from the local CPU wheel; never a
# CUDA build: constraints.txt pins it), then the library (.ci/libraries/<step>.txt) resolved
# together with card-envs' own dependencies, as a user's `pip install` would. The tests run on
# this checkout's sources (PYTHONPATH; the plain-Python build). Virtualenvs are cached outside
# the repository ($CARD_ENVS_LIBRARY_VENVS, default ~/.cache/card-envs/library-venvs) and
# rebuilt only when their requirements, constraints.txt or pyproject.toml change.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
CACHE=${CARD_ENVS_LIBRARY_VENVS:-${XDG_CACHE_HOME:-$HOME/.cache}/card-envs/library-venvs}
PIP_FLAGS=(--quiet --constraint "$ROOT/constraints.txt")
[[ -d /opt/wheels ]] && PIP_FLAGS+=(--find-links /opt/wheels)
STEPS=("$@")
((${#STEPS[@]})) || STEPS=(torchrl tianshou agilerl supersuit pettingzoo-lowest)
# A step's virtualenv: its own, except rllib-cluster (a real Ray cluster), which uses rllib's.
venv_name() { if [[ $1 == rllib-cluster ]]; then echo rllib; else echo "$1"; fi; }

# card-envs' own run-time dependencies, from pyproject.toml, plus those of the extras a step's
# requirements file names on a line `# card-envs extras: a b` (their own card-envs[...] lines
# followed once).
own_requirements() {
    python3 - "$ROOT/pyproject.toml" "$1" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
def block(name):
    found = re.search(rf"^{name} = \[(.*?)^\]", text, re.S | re.M).group(1)
    return re.findall(r'^\s*"([^"]+)"', found, re.M)
wanted = re.findall(r"^# card-envs extras:(.*)$", open(sys.argv[2]).read(), re.M)
extras = [e for line in wanted for e in line.split()]
reqs = block("dependencies")
for extra in extras:
    extras += [m for r in block(extra) for m in re.findall(r"^card-envs\[(\w+)\]$", r)]
    reqs += [r for r in block(extra) if not r.startswith("card-envs[")]
print("\n".join(dict.fromkeys(reqs)))
PY
}

venv_for() {
    local step=$1 venv=$CACHE/$1 key
    key=$(cat ".ci/libraries/$step.txt" constraints.txt pyproject.toml .ci/libraries.sh \
          | sha256sum | cut -c1-16)
    if [[ -f $venv/.key && $(cat "$venv/.key") == "$key" ]]; then
        echo "$step: reusing $venv"
        return
    fi
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install "${PIP_FLAGS[@]}" --upgrade pip
    # The PettingZoo-range step needs no torch: it runs the PettingZoo API tests.
    [[ $step == pettingzoo-lowest ]] || "$venv/bin/pip" install "${PIP_FLAGS[@]}" torch==2.13.0
    own_requirements ".ci/libraries/$step.txt" > "$venv/card-envs-requirements.txt"
    "$venv/bin/pip" install "${PIP_FLAGS[@]}" -r ".ci/libraries/$step.txt" \
        -r "$venv/card-envs-requirements.txt" "pytest>=8"
    "$venv/bin/pip" check
    echo "$key" > "$venv/.key"
}

run_tests() {
    local step=$1
    case $step in
        pettingzoo-lowest)
            # Everything that drives PettingZoo's API and its tests on our envs.
            set -- tests/test_dogpile_parallel.py \
                tests/test_api_all_games.py::test_pettingzoo_api \
                tests/test_api_all_games.py::test_pettingzoo_seed \
                tests/test_api_all_games.py::test_registries \
                tests/test_ecosystem.py -k "pettingzoo or aec or parallel or state or registries" ;;
        # The adapter, modules and export, sampling with RLlib's EnvRunner (no cluster), then
        # backend: rllib training on a local Ray (league, kill and resume, export).
        rllib) set -- tests/libraries/test_rllib.py tests/libraries/test_rllib_runner.py \
                      tests/libraries/test_rllib_train.py ;;
        # Two Ray nodes on this host (one CPU each): placement, training, kill, resume.
        rllib-cluster) set -- -m cluster tests/libraries/test_rllib_cluster.py ;;
        *) set -- "tests/libraries/test_$step.py" ;;
    esac
    PYTHONPATH=$ROOT CARD_ENVS_PURE_PYTHON=1 "$CACHE/$(venv_name "$step")/bin/python" -m pytest \
        -p no:cacheprovider -W ignore::DeprecationWarning "$@"
}

for step in "${STEPS[@]}"; do
    venv=$(venv_name "$step")
    [[ -f .ci/libraries/$venv.txt ]] || { echo "unknown step $step" >&2; exit 2; }
    start=$SECONDS
    echo "== $step"
    venv_for "$venv"
    "$CACHE/$venv/bin/pip" freeze | grep -i -E "^($venv|ray|torch|pettingzoo|gymnasium|tensordict|stable|sb3)[-_=]" || true
    run_tests "$step"
    echo "== $step: $((SECONDS - start)) s"
done
