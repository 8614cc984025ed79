"""Labels that do not overlap, for the scatter of movies (chapter 01's figures).

Matplotlib places every label where it is told; a few dozen movie titles then pile up. ``declutter``
tries each label on the other side of its dot, then nudges the ones still overlapping apart vertically.
"""

from __future__ import annotations

__all__ = ["declutter", "flip"]


def flip(text) -> None:
    """Move a label to the other side of its dot."""
    if text.get_ha() == "left":
        text.set(ha="right", text=text.get_text().strip() + " ")
    else:
        text.set(ha="left", text=" " + text.get_text().strip())


def declutter(ax, texts, steps: int = 150) -> None:
    """Untangle overlapping labels: first try each on the other side of its dot, then nudge apart
    vertically.
    """
    if len(texts) < 2:
        return
    renderer = ax.figure.canvas.get_renderer()

    def boxes():
        return [t.get_window_extent(renderer).expanded(1.05, 1.25) for t in texts]

    def clashes(i: int, current) -> int:
        return sum(current[i].overlaps(b) for j, b in enumerate(current) if j != i)

    for i, text in enumerate(texts):
        before = clashes(i, boxes())
        if before:
            flip(text)
            if clashes(i, boxes()) >= before:
                flip(text)  # no better: put it back
    to_data = ax.transData.inverted()
    for _ in range(steps):
        current = boxes()
        shifts = [0.0] * len(texts)
        for i in range(len(texts)):
            for j in range(i + 1, len(texts)):
                if current[i].overlaps(current[j]):
                    up, down = (i, j) if current[i].y0 >= current[j].y0 else (j, i)
                    shifts[up] += 2.0
                    shifts[down] -= 2.0
        if not any(shifts):
            return
        for text, shift in zip(texts, shifts, strict=True):
            x, y = ax.transData.transform(text.get_position())
            text.set_position(to_data.transform((x, y + shift)))
