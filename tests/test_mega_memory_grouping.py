"""Mega Mem-Ory: groups, points, and the exact end-of-round regrouping against brute force."""

from __future__ import annotations

import numpy as np
import pytest

from card_envs.core.cards import RANK_OF, SUIT_OF, card_id
from card_envs.games.mega_memory.grouping import (
    best_grouping,
    cards_mask,
    centre_subsets,
    group_value,
    is_group,
    is_pair,
    run_value,
)


def ids(text: str) -> list[int]:
    return [card_id(c) for c in text.split()]


def brute_force(cards: list[int]) -> int:
    """Most points over every partition of ``cards`` into legal groups (-1 if none): the
    smallest remaining card joins every legal group drawn from the remaining cards."""
    best = -1

    def rec(rest: list[int], total: int) -> None:
        nonlocal best
        if not rest:
            best = max(best, total)
            return
        first, others = rest[0], rest[1:]
        n = len(others)
        for k in range(1, 1 << n):
            group = [first] + [others[i] for i in range(n) if k >> i & 1]
            value = group_value(group)
            if value >= 0:
                rec([others[i] for i in range(n) if not k >> i & 1], total + value)

    rec(sorted(cards), 0)
    return best


def test_points_table_from_the_text() -> None:
    assert group_value(ids("5H 5S")) == 1  # a pair
    assert group_value(ids("5H 6H")) == 1  # a sequence of two
    assert group_value(ids("5H 5S 5D")) == 2  # triples
    assert group_value(ids("5H 6H 7H")) == 2  # a sequence of three
    assert group_value(ids("5H 5S 5D 5C")) == 5  # four of a kind
    assert group_value(ids("5H 6H 7H 8H")) == 5  # sequence of four
    assert group_value(ids("5H 6H 7H 8H 9H")) == 8  # "5 card run is 8 points"
    assert group_value(ids("5H 6H 7H 8H 9H TH")) == 11  # "6 card run is 11"
    assert [run_value(n) for n in range(2, 14)] == [1, 2, 5, 8, 11, 14, 17, 20, 23, 26, 29, 32]


def test_runs_are_one_suit_consecutive_and_aces_low() -> None:
    assert group_value(ids("AH 2H 3H")) == 2  # "ACES are always low"
    assert group_value(ids("QH KH AH")) == -1  # no wrap-around
    assert group_value(ids("KH AH")) == -1
    assert group_value(ids("5H 6S")) == -1  # runs are same suit
    assert group_value(ids("5H 7H")) == -1  # consecutive
    assert group_value(ids("5H 5S 6H")) == -1  # one group is a match OR a run
    assert group_value(ids("5H")) == -1  # no card without a partner


def test_centre_subsets_single_card() -> None:
    tops = tuple(ids("4H 6H 7H 5C"))
    # 5H: runs 4-5, 5-6, 4-6, 5-7, 4-7 and the pair with 5C; never 5H+7H (gap) or mixed sets.
    assert sorted(centre_subsets((card_id("5H"),), tops)) == [1, 2, 3, 6, 7, 8]
    assert centre_subsets((card_id("9S"),), tops) == ()
    assert sorted(centre_subsets((card_id("AH"),), tuple(ids("KH 2H QH 3S")))) == [2]
    assert sorted(centre_subsets((card_id("KH"),), tuple(ids("QH AH 2H JD")))) == [1]


def test_centre_subsets_two_cards_and_empty_piles() -> None:
    tops = (card_id("6H"), -1, card_id("9H"), card_id("5S"))
    # 5H and 7H need 6H between them; 5H+5S+... are not one group with 7H.
    assert sorted(centre_subsets(tuple(ids("5H 7H")), tops)) == [1]
    assert sorted(centre_subsets(tuple(ids("5H 5D")), tops)) == [0, 8]
    assert centre_subsets(tuple(ids("5H 8D")), tops) == ()
    with pytest.raises(ValueError, match="one or two fixed cards"):
        centre_subsets(tuple(ids("5H 6H 7H")), tops)


HAND_MADE = [
    ("", 0),
    ("5H", -1),
    ("5H 5S", 1),
    ("5H 7H", -1),
    # Scored as 3H4H, 5H5S5D and 6H7H (1 + 2 + 1), regrouped into 3H-7H and 5S5D (8 + 1).
    ("3H 4H 5H 5S 5D 6H 7H", 9),
    # Four of a kind beats two pairs and beats breaking runs.
    ("5C 5D 5H 5S", 5),
    # Two runs (2 + 2) beat three pairs (3).
    ("4H 5H 6H 4S 5S 6S", 4),
    # Three runs and three triples tie at 6.
    ("4H 5H 6H 4S 5S 6S 4D 5D 6D", 6),
    # 6S has no partner but 6H: AH-5H (8) + 6H6S (1), not AH-6H (11) with 6S alone.
    ("AH 2H 3H 4H 5H 6H 6S", 9),
    # A 13-card run.
    (" ".join(r + "C" for r in "A23456789TJQK"), 32),
]


@pytest.mark.parametrize(("text", "expected"), HAND_MADE)
def test_best_grouping_hand_made(text: str, expected: int) -> None:
    cards = ids(text) if text else []
    assert best_grouping(cards_mask(cards)) == expected
    if len(cards) <= 12:
        assert brute_force(cards) == expected


def _random_scored_set(rng: np.random.Generator, size: int) -> list[int]:
    """Cards clustered in a few ranks and suits, so that groups overlap and regrouping matters."""
    ranks = rng.choice(13, size=rng.integers(2, 6), replace=False)
    suits = rng.choice(4, size=rng.integers(1, 5), replace=False)
    pool = [s * 13 + int(r) for s in suits for r in ranks]
    pool += [s * 13 + int(r) + d for s in suits for r in ranks for d in (1, -1)
             if 0 <= int(r) + d < 13]
    pool = sorted(set(pool))
    return [int(c) for c in rng.choice(pool, size=min(size, len(pool)), replace=False)]


def test_best_grouping_matches_brute_force_on_random_sets() -> None:
    rng = np.random.default_rng(2024)
    checked = with_groups = 0
    for _ in range(400):
        cards = _random_scored_set(rng, int(rng.integers(2, 11)))
        expected = brute_force(cards)
        assert best_grouping(cards_mask(cards)) == expected, sorted(cards)
        checked += 1
        with_groups += expected > 0
    assert checked == 400 and with_groups > 50


def test_best_grouping_matches_brute_force_on_unions_of_groups() -> None:
    """Sets that are unions of legal groups (what players really hold) always split."""
    rng = np.random.default_rng(7)
    for _ in range(150):
        free = set(range(52))
        cards: list[int] = []
        for _ in range(int(rng.integers(1, 4))):
            c = int(rng.choice(sorted(free)))
            if rng.random() < 0.5:
                group = [s * 13 + RANK_OF[c] for s in range(4) if s * 13 + RANK_OF[c] in free]
                group = group[: int(rng.integers(2, 5))]
            else:
                group = [SUIT_OF[c] * 13 + r for r in range(RANK_OF[c], min(13, RANK_OF[c] + 4))
                         if SUIT_OF[c] * 13 + r in free]
                group = group[: int(rng.integers(2, 5))]
            if group_value(group) < 0:
                continue
            cards += group
            free -= set(group)
        if not cards or len(cards) > 12:
            continue
        value = best_grouping(cards_mask(cards))
        assert value >= 0
        assert value == brute_force(cards), sorted(cards)


def test_is_pair_agrees_with_is_group_on_every_pair() -> None:
    for a in range(52):
        for b in range(52):
            if a != b:
                assert is_pair(a, b) == is_group([a, b]), (a, b)


def test_centre_subsets_match_brute_force_over_every_pile_subset() -> None:
    """Every answer, for one and two fixed cards, against trying all 16 pile subsets."""
    rng = np.random.default_rng(11)
    checked = nonempty = 0
    for _ in range(3000):
        anchor = int(rng.integers(52))
        # Tops near the anchor in rank or suit, so that groups are common.
        near = [c for c in range(52) if c != anchor and (RANK_OF[c] == RANK_OF[anchor] or (
            SUIT_OF[c] == SUIT_OF[anchor] and abs(RANK_OF[c] - RANK_OF[anchor]) <= 3))]
        cards = [int(c) for c in rng.choice(near, size=5, replace=False)]
        tops = tuple(c if rng.random() < 0.85 else -1 for c in cards[:4])
        for fixed in ((anchor,), (anchor, cards[4])):
            expected = sorted(
                s for s in range(16)
                if all(tops[p] >= 0 for p in range(4) if s >> p & 1)
                and is_group(list(fixed) + [tops[p] for p in range(4) if s >> p & 1]))
            assert sorted(centre_subsets(fixed, tops)) == expected, (fixed, tops)
            checked += 1
            nonempty += bool(expected)
    assert checked == 6000 and nonempty > 1500
