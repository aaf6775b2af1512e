"""Each game's scene, built from its named observation fields (a seat's view) or state fields
(the view from above). The field names and meanings are the games' RULES.md tables."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from card_envs.core.cards import RANKS, card_code
from card_envs.pictures.scene import Facts, Scene, Slot, Zone

Fields = dict[str, np.ndarray]
SUIT_SYMBOLS = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}


def card_slot(card: int, face: str = "up", caption: str = "",
              actions: list[str] | None = None) -> Slot:
    code = card_code(card)
    if code.startswith("X"):
        return Slot(face, "Joker", "", caption, actions or [])
    rank = "10" if code[0] == "T" else code[0]
    colour = "red" if code[1] in "DH" else "black"
    return Slot(face, rank + SUIT_SYMBOLS[code[1]], colour, caption, actions or [])


def cards_in(onehot: np.ndarray) -> list[int]:
    return [int(c) for c in np.flatnonzero(np.asarray(onehot) > 0.5)]


def one(onehot: np.ndarray) -> int:
    """The index of a one-hot, or -1 for none."""
    hits = np.flatnonzero(np.asarray(onehot) > 0.5)
    return int(hits[0]) if len(hits) else -1


def back(caption: str = "", actions: list[str] | None = None) -> Slot:
    return Slot("back", caption=caption, actions=actions or [])


def seat_name(seat: int, you: int | None) -> str:
    return f"player_{seat}" + (" (you)" if seat == you else "")


def order(view: str, seat: int | None, n: int) -> list[int]:
    """Seats as the vector lists them: offsets from the viewer (own first) or seat order."""
    return [(seat + k) % n for k in range(n)] if view == "seat" and seat is not None \
        else list(range(n))


# -- ROY ----------------------------------------------------------------------------------------
def roy(game: Facts, f: Fields, view: str, seat: int | None) -> Scene:
    n = game.num_players
    seats = order(view, seat, n)
    target = game.config["target_score"]
    zones = []
    if view == "seat":
        for k in range(1, n):
            size = round(float(f["opponent_hand_sizes"][k - 1]) * 52)
            zones.append(Zone(seat_name(seats[k], seat), [back() for _ in range(size)]))
        hands = {seats[0]: cards_in(f["hand"])}
        deck = round(float(f["deck_size"][0]) * 52)
    else:
        hands = {s: cards_in(f["hands"][s]) for s in range(n)}
        deck = int(f["deck"].sum())
    top = one(f["top_card"])
    table = [card_slot(top, caption="discard") if top >= 0 else Slot("empty", caption="discard"),
             back(f"deck {deck}", game.named("draw"))]
    zones.append(Zone("table", table))
    for s, cards in hands.items():
        code = [card_code(c) for c in cards]
        slots = [card_slot(c, actions=game.named(f"play:{k}", *(f"wild:{k}>{t}" for t in "CDHS")))
                 for c, k in zip(cards, code, strict=True)]
        zones.append(Zone(seat_name(s, seat), slots))
    scores = [round(float(v) * target) for v in f["scores"]]
    lines = ["scores " + ", ".join(f"player_{s} {v}" for s, v in zip(seats, scores, strict=True))
             + f" (target {target})"]
    suit = one(f["announced_suit"])
    if suit >= 0:
        lines.append(f"a Jack announced {SUIT_SYMBOLS['CDHS'[suit]]}")
    if float(f["ace_penalty"][0]) > 0:
        lines.append(f"Ace penalty: draw {round(float(f['ace_penalty'][0]) * 8)}")
    if view == "table":
        lines.append(f"to act: player_{one(f['current_player'])}")
    return Scene("ROY", lines, zones)


# -- Mega Mem-Ory Ultima-Ory ------------------------------------------------------------------
def _pile_actions(game: Facts, pile: int) -> list[str]:
    return game.named(f"score:{pile}", f"multiscore:{pile}")


def mega_memory(game: Facts, f: Fields, view: str, seat: int | None) -> Scene:
    seats = order(view, seat, 2)
    target = game.config["target_score"]
    zones = []
    if view == "seat":
        sides = [f["my_side"], f["opp_side"]]
        scored = [f["my_scored"], f["opp_scored"]]
        centre = []
        for p in range(4):
            top = one(f["centre"][p])
            size = round(float(f["pile_sizes"][p]) * 5)
            centre.append(card_slot(top, caption=f"pile {p + 1}: {size}",
                                    actions=_pile_actions(game, p + 1)) if top >= 0
                          else Slot("empty", caption=f"pile {p + 1}: {size}"))
        deck = round(float(f["deck_size"][0]) * 52)
        discard = round(float(f["discard_size"][0]) * 52)
        known = cards_in(f["discard_known"])
        depth = {c: round(float(f["discard_depth"][c]) * 51) for c in known}
    else:
        sides = [f["sides"][0], f["sides"][1]]
        scored = [f["scored"][0], f["scored"][1]]
        centre = []
        for p in range(4):
            cards = sorted(cards_in(f["centre"][p]),
                           key=lambda c: float(f["centre_depth"][c]))
            centre.append(card_slot(cards[0], caption=f"pile {p + 1}: {len(cards)}",
                                    actions=_pile_actions(game, p + 1)) if cards
                          else Slot("empty", caption=f"pile {p + 1}: 0"))
        deck = int(f["deck"].sum())
        discard = int(f["discard"].sum())
        known = cards_in(f["discard"])
        depth = {c: round(float(f["discard_depth"][c]) * 51) for c in known}
    on_top = [c for c in known if depth[c] == 0]
    middle = [back(f"deck {deck}", game.named("reveal:deck")),
              card_slot(on_top[0], caption=f"discard {discard}",
                        actions=game.named("reveal:discard", "flip:discard")) if on_top
              else Slot("empty" if discard == 0 else "back", caption=f"discard {discard}",
                        actions=game.named("reveal:discard", "flip:discard"))]
    for key, which in (("first_card", "first"), ("second_card", "second")):
        c = one(f[key])
        if c >= 0:
            middle.append(card_slot(c, caption=which, actions=game.named(
                f"keep:{which}", f"discard:{which}")))
    for i in (1, 0):
        s = seats[i]
        slots = []
        for k in range(4):
            c = one(sides[i][k])
            acts = game.named(f"flip:side{k + 1}") if i == 0 else []
            face = "up" if view == "table" else "known"
            slots.append(card_slot(c, face, f"side {k + 1}", acts) if c >= 0
                         else back(f"side {k + 1}", acts))
        won = cards_in(scored[i])
        slots += [card_slot(c, caption="scored") for c in won]
        zones.append(Zone(seat_name(s, seat), slots))
        if i == 1:
            zones.append(Zone("centre", centre))
            zones.append(Zone("deck, discard, revealed", middle))
    mega = [round(float(v) * target) for v in f["mega_points"]]
    points = [round(float(v) * 32) for v in f["round_points"]]
    from card_envs.games.mega_memory.engine import PHASE_NAMES

    lines = ["mega-points " + ", ".join(f"player_{s} {m}" for s, m in zip(seats, mega, strict=True))
             + f" (target {target}); round points " + ", ".join(map(str, points)),
             f"phase: {PHASE_NAMES[one(f['phase'])] if one(f['phase']) >= 0 else 'over'}"]
    if view == "seat" and depth:
        lines.append("remembered in the discard pile (top first): " + " ".join(
            card_slot(c).label for c in sorted(known, key=lambda c: depth[c])))
    if view == "table":
        lines.append(f"to act: player_{one(f['current_player'])}")
    return Scene("Mega Mem-Ory Ultima-Ory", lines, zones)


# -- Memory-Uno ------------------------------------------------------------------------------
KINDS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "K", "Joker")
COPIES = np.array([4] * 12 + [2, 2, 2], dtype=np.float32)


def kind_slot(kind: int, face: str, caption: str, actions: list[str]) -> Slot:
    colour = "black" if kind == 12 else "red" if kind == 13 else ""
    return Slot(face, KINDS[kind], colour, caption, actions)


def memory_uno(game: Facts, f: Fields, view: str, seat: int | None) -> Scene:
    from card_envs.games.memory_uno.engine import PHASE_NAMES

    n = game.num_players
    seats = order(view, seat, n)
    zones = []
    for o, s in enumerate(seats):
        slots = []
        for p in range(8):
            if f["occupied"][o, p] < 0.5:
                continue
            off = (s - seat) % n if view == "seat" and seat is not None else None
            acts = [] if off is None else game.named(
                *((f"own:{p}",) if off == 0 else ()), f"pick:{off}.{p}", f"throw:{off}.{p}")
            if view == "seat":
                kind = one(f["known_kind"][o, p]) if f["known"][o, p] > 0.5 else -1
            else:
                kind = one(f["cards"][o, p])
            slot = kind_slot(kind, "known" if view == "seat" else "up", f"{p}", acts) \
                if kind >= 0 else back(f"{p}", acts)
            slot.marked = view == "seat" and bool(f["selected"][o, p] > 0.5)
            slots.append(slot)
        zones.append(Zone(seat_name(s, seat), slots))
    if view == "seat":
        deck = round(float(f["deck_size"][0]) * 54)
        grave = round(float(f["grave_size"][0]) * 54)
    else:
        deck = round(float((f["deck_kinds"] * COPIES).sum()))
        grave = round(float((f["grave_kinds"] * COPIES).sum()))
    top = one(f["top_kind"])
    middle = [back(f"deck {deck}", game.named("draw_deck")),
              kind_slot(top, "up", f"graveyard {grave}", game.named("draw_grave")) if top >= 0
              else Slot("empty", caption=f"graveyard {grave}", actions=game.named("draw_grave"))]
    drawn = one(f["drawn_kind"])
    if drawn >= 0:
        middle.append(kind_slot(drawn, "known", "drawn", game.named("keep", "discard")))
    zones.insert(0, Zone("table", middle))
    phase = one(f["phase"])
    turn = seats[one(f["turn_player"])] if one(f["turn_player"]) >= 0 else -1
    totals = [round(float(v) * 100) for v in f["totals"]]
    lines = [f"phase: {PHASE_NAMES[phase] if phase >= 0 else 'over'}; turn of player_{turn}",
             "totals " + ", ".join(f"player_{s} {t}" for s, t in zip(seats, totals, strict=True))]
    if view == "table":
        lines.append(f"to act: player_{one(f['current_player'])}")
    return Scene("Memory-Uno", lines, zones)


# -- Deluxe Memory ---------------------------------------------------------------------------
def deluxe_memory(game: Facts, f: Fields, view: str, seat: int | None) -> Scene:
    from card_envs.games.deluxe_memory.engine import PHASE_NAMES

    n = game.num_players
    seats = order(view, seat, n)
    slots = []
    for cell in range(56):
        row, col = divmod(cell, 8)
        name = f"{'abcdefg'[row]}{col + 1}"
        acts = game.named(f"cell:{name}")
        if f["present"][cell] < 0.5:
            slots.append(Slot("empty", caption=name))
            continue
        card = f["cards"][cell]
        rank = one(card[:14])
        if rank < 0:
            slot = back(name, acts)
        else:
            colour = "black" if card[14] > 0.5 else "red" if card[15] > 0.5 else ""
            label = "Joker" if rank == 13 else ("10" if RANKS[rank] == "T" else RANKS[rank])
            slot = Slot("up" if f["face_up"][cell] > 0.5 or view == "table" else "known",
                        label, colour, name, acts)
        slot.marked = bool(f["first_pick"][cell] > 0.5 or f["second_pick"][cell] > 0.5
                           or f["effect_cells"][cell] > 0.5)
        slots.append(slot)
    supply = game.config["tokens_per_player"] * n
    tokens = [round(float(v) * supply) for v in f["tokens"]]
    players = [Slot("up", f"{t}", "", seat_name(s, seat),
                    game.named(f"target:+{(s - seat) % n}") if seat is not None else [])
               for s, t in zip(seats, tokens, strict=True)]
    phase = one(f["phase"])
    actor = one(f["actor"])
    lines = [f"bank {round(float(f['bank'][0]) * supply)} tokens; "
             + (f"player_{seats[actor]} decides: {PHASE_NAMES[phase]}" if actor >= 0
                and phase >= 0 else "game over")]
    return Scene("Deluxe Memory", lines, [Zone("players (tokens)", players),
                                          Zone("grid", slots, columns=8)])


# -- Dogpile ---------------------------------------------------------------------------------
def bone_slot(v: np.ndarray, face: str, caption: str, actions: list[str]) -> Slot:
    """A bone from occupied + rank (A..K, joker) + suit values: known only if one-hot."""
    rank, suit = v[:14], v[14:18]
    if rank.max() < 0.99:
        return back(caption, actions)
    r = int(rank.argmax())
    if r == 13:
        return Slot(face, "Joker", "", caption, actions)
    s = one(suit)
    return card_slot(s * 13 + r, face, caption, actions) if s >= 0 \
        else Slot(face, RANKS[r], "", caption, actions)


def dogpile(game: Facts, f: Fields, view: str, seat: int | None) -> Scene:
    n = game.num_players
    seats = order(view, seat, n)
    pile = []
    for slot in range(54):
        v = f["pile"][slot]
        name = f"{slot:02d}"
        acts = game.named(f"dig:{name}", f"up:{name}", f"down:{name}")
        if v[0] < 0.5:
            pile.append(Slot("empty", caption=name, actions=acts))
            continue
        face = "up" if v[1] > 0.5 else "known" if view == "seat" else "up"
        pile.append(bone_slot(v[2:], face, name, acts))
    zones = [Zone("the pile", pile, columns=9)]
    for k, s in enumerate(seats):
        if view == "seat":
            paws = f["own_paws"] if k == 0 else f["opponent_paws"][k - 1]
        else:
            paws = f["paws"][s]
        slots = []
        for i in range(3):
            acts = game.named(f"bury:{i}") if k == 0 and view == "seat" else []
            if paws[i][0] < 0.5:
                slots.append(Slot("empty", caption=f"paw {i}"))
            else:
                face = "known" if view == "seat" and k > 0 else "up"
                slots.append(bone_slot(paws[i][1:], face, f"paw {i}", acts))
        held = f["held"][k if view == "seat" else s]
        if held[0] > 0.5:
            slots.append(bone_slot(held[1:], "up", "digging", game.named("keep")))
        zones.append(Zone(seat_name(s, seat), slots))
    totals = [round(float(v) * 100) for v in f["totals"]]
    rnd = one(f["round"])
    phase = one(f["phase"])
    lines = [f"round {rnd + 1}, {PHASES[phase] if phase >= 0 else 'over'}, "
             f"{float(f['time_left'][0]):.0%} of the round's time left",
             "totals " + ", ".join(f"player_{s} {t}" for s, t in zip(seats, totals, strict=True))]
    return Scene("Dogpile", lines, zones)


PHASES = ("play", "sniff", "shuffle", "over")  # the phase field's order (RULES.md)

BUILDERS: dict[str, Callable[[Facts, Fields, str, Any], Scene]] = {
    "roy": roy, "mega_memory": mega_memory, "memory_uno": memory_uno,
    "deluxe_memory": deluxe_memory, "dogpile": dogpile,
}
