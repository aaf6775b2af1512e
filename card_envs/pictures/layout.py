"""Where everything in a scene goes on the page: one layout that the SVG and the raster
drawings both follow, so they show the same picture."""

from __future__ import annotations

from dataclasses import dataclass

from card_envs.pictures.scene import Scene, Slot

WIDTH = 760
MARGIN = 12
CARD_W, CARD_H, GAP = 40, 56, 6
LINE_H = 18
CAPTION_H = 13
TITLE_SIZE, TEXT_SIZE, CARD_SIZE, CAPTION_SIZE = 16, 12, 13, 9

COLOURS = {
    "table": (32, 96, 64), "text": (240, 240, 230), "face": (250, 250, 245),
    "known": (214, 228, 250), "back": (52, 76, 160), "empty": (44, 110, 76),
    "edge": (20, 20, 20), "red": (200, 30, 40), "black": (20, 20, 20), "plain": (90, 60, 20),
    "mark": (250, 200, 40),
}


@dataclass
class Text:
    x: int
    y: int  # top of the text
    text: str
    size: int


@dataclass
class Box:
    x: int
    y: int
    slot: Slot


@dataclass
class Placed:
    width: int
    height: int
    texts: list[Text]
    boxes: list[Box]


def place(scene: Scene) -> Placed:
    texts = [Text(MARGIN, MARGIN, scene.title, TITLE_SIZE)]
    y = MARGIN + TITLE_SIZE + 8
    for line in scene.lines:
        texts.append(Text(MARGIN, y, line, TEXT_SIZE))
        y += LINE_H
    boxes = []
    fit = (WIDTH - 2 * MARGIN + GAP) // (CARD_W + GAP)
    for zone in scene.zones:
        y += 6
        texts.append(Text(MARGIN, y, zone.title, TEXT_SIZE))
        y += LINE_H
        columns = min(zone.columns or fit, fit)
        for i, slot in enumerate(zone.slots):
            row, col = divmod(i, columns)
            boxes.append(Box(MARGIN + col * (CARD_W + GAP),
                             y + row * (CARD_H + CAPTION_H + GAP), slot))
        rows = max(1, -(-len(zone.slots) // columns))
        y += rows * (CARD_H + CAPTION_H + GAP)
    return Placed(WIDTH, y + MARGIN, texts, boxes)


def ink(slot: Slot) -> tuple[int, int, int]:
    return COLOURS[slot.colour] if slot.colour else COLOURS["plain"]


def fill(slot: Slot) -> tuple[int, int, int]:
    return COLOURS[{"up": "face", "known": "known", "back": "back", "empty": "empty"}[slot.face]]
