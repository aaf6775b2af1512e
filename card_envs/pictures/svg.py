"""A scene as SVG text (the standard library's ElementTree writes and escapes the XML)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from card_envs.pictures.layout import (
    CAPTION_SIZE,
    CARD_H,
    CARD_SIZE,
    CARD_W,
    COLOURS,
    Placed,
    fill,
    ink,
    place,
)
from card_envs.pictures.scene import Scene


def _rgb(colour: tuple[int, int, int]) -> str:
    return "#{:02x}{:02x}{:02x}".format(*colour)


def to_svg(scene: Scene) -> str:
    """The scene as a standalone SVG document."""
    placed: Placed = place(scene)
    root = ET.Element("svg", xmlns="http://www.w3.org/2000/svg", width=str(placed.width),
                      height=str(placed.height), viewBox=f"0 0 {placed.width} {placed.height}",
                      attrib={"font-family": "DejaVu Sans, Arial, sans-serif"})
    ET.SubElement(root, "rect", width="100%", height="100%", fill=_rgb(COLOURS["table"]))
    for t in placed.texts:
        node = ET.SubElement(root, "text", x=str(t.x), y=str(t.y + t.size),
                             fill=_rgb(COLOURS["text"]), attrib={"font-size": str(t.size)})
        node.text = t.text
    for b in placed.boxes:
        s = b.slot
        rect = {"x": str(b.x), "y": str(b.y), "width": str(CARD_W), "height": str(CARD_H),
                "rx": "4", "fill": _rgb(fill(s)),
                "stroke": _rgb(COLOURS["mark"] if s.marked else COLOURS["edge"]),
                "stroke-width": "3" if s.marked else "1"}
        if s.face == "empty":
            rect["stroke-dasharray"] = "3 3"
        ET.SubElement(root, "rect", attrib=rect)
        if s.label:
            node = ET.SubElement(root, "text", x=str(b.x + CARD_W // 2),
                                 y=str(b.y + CARD_H // 2 + CARD_SIZE // 2), fill=_rgb(ink(s)),
                                 attrib={"font-size": str(CARD_SIZE), "text-anchor": "middle"})
            node.text = s.label
        if s.caption:
            node = ET.SubElement(root, "text", x=str(b.x + CARD_W // 2),
                                 y=str(b.y + CARD_H + CAPTION_SIZE + 1),
                                 fill=_rgb(COLOURS["text"]),
                                 attrib={"font-size": str(CAPTION_SIZE), "text-anchor": "middle"})
            node.text = s.caption
    return ET.tostring(root, encoding="unicode")
