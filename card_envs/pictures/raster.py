"""A scene as an RGB array (``render_mode="rgb_array"``), drawn with Pillow (the ``render``
extra: ``pip install "card-envs[render]"``)."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from card_envs.pictures.layout import (
    CAPTION_SIZE,
    CARD_H,
    CARD_SIZE,
    CARD_W,
    COLOURS,
    WIDTH,
    fill,
    ink,
    place,
)
from card_envs.pictures.scene import Scene

#: Every frame's size (height, width): a video (Gymnasium's RecordVideo) needs one size for all
#: frames, so a taller picture is scaled down into it and a shorter one padded.
FRAME = (960, WIDTH)
EXTRA_HINT = 'render_mode="rgb_array" draws with Pillow: pip install "card-envs[render]"'


class MissingPillowError(ImportError, TypeError):
    """Pillow is not installed. Also a TypeError, as an unsupported render mode is: SB3's
    ``make_vec_env`` offers ``render_mode="rgb_array"`` and retries without it on a TypeError."""


def require_pillow() -> None:
    """:class:`MissingPillowError` naming the extra when Pillow is missing (checked when the
    env is made)."""
    try:
        import PIL.ImageDraw  # noqa: F401
    except ImportError as err:
        raise MissingPillowError(f"{EXTRA_HINT} ({err})") from None


@functools.lru_cache(maxsize=8)
def _font(size: int) -> Any:
    from PIL import ImageFont

    try:  # DejaVu has the suit symbols; Debian and most desktops have it
        return ImageFont.truetype("DejaVuSans.ttf", size)
    except OSError:
        return ImageFont.load_default(size)


def _label(text: str, font: Any) -> str:
    """Suits as letters where the font lacks their symbols (Pillow's own font)."""
    if hasattr(font, "getmask") and "DejaVu" in str(getattr(font, "path", "")):
        return text
    return text.translate(str.maketrans("♣♦♥♠", "CDHS"))


def to_rgb_array(scene: Scene) -> np.ndarray:
    """The scene as a :data:`FRAME`-sized ``(height, width, 3)`` uint8 array."""
    require_pillow()
    from PIL import Image

    image = draw_scene(scene)
    if image.height > FRAME[0]:
        scale = FRAME[0] / image.height
        image = image.resize((round(image.width * scale), FRAME[0]), Image.Resampling.LANCZOS)
    frame = Image.new("RGB", (FRAME[1], FRAME[0]), COLOURS["table"])
    frame.paste(image, ((FRAME[1] - image.width) // 2, 0))
    return np.asarray(frame, dtype=np.uint8)


def draw_scene(scene: Scene) -> Any:
    """The scene as a Pillow image of its natural size (the docs' screenshots use it)."""
    require_pillow()
    from PIL import Image, ImageDraw

    placed = place(scene)
    image = Image.new("RGB", (placed.width, placed.height), COLOURS["table"])
    draw = ImageDraw.Draw(image)
    for t in placed.texts:
        font = _font(t.size)
        draw.text((t.x, t.y), _label(t.text, font), fill=COLOURS["text"], font=font)
    for b in placed.boxes:
        s = b.slot
        draw.rounded_rectangle((b.x, b.y, b.x + CARD_W, b.y + CARD_H), radius=4, fill=fill(s),
                               outline=COLOURS["mark"] if s.marked else COLOURS["edge"],
                               width=3 if s.marked else 1)
        if s.label:
            font = _font(CARD_SIZE)
            draw.text((b.x + CARD_W // 2, b.y + CARD_H // 2), _label(s.label, font),
                      fill=ink(s), font=font, anchor="mm")
        if s.caption:
            font = _font(CAPTION_SIZE)
            draw.text((b.x + CARD_W // 2, b.y + CARD_H + 2), s.caption, fill=COLOURS["text"],
                      font=font, anchor="ma")
    return image
