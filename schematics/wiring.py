"""The wiring diagram a builder solders from, drawn from the netlist (so it cannot disagree).

Left: the Pi's 40-pin header as seen from above, each used pin in its wire
colour with the net it carries. Right: every net as one line of wire, from
the Pi (or a board) through the seat cable to the button or display, each end
as "reference pin (name)".
"""

from __future__ import annotations

from typing import Any

import parts
from PIL import Image, ImageDraw, ImageFont

COLOURS = {  # wire colours: the usual conventions, then one per kind of signal
    "GND": (30, 30, 30), "+5V": (220, 40, 40), "+3V3": (240, 140, 20), "SDA": (40, 110, 230),
    "SCL": (230, 200, 30), "SLAP": (40, 170, 70), "INT": (150, 70, 200), "BUZZER": (120, 120, 120),
    "LED": (0, 170, 170), "NAV": (150, 100, 50),
}
NAV = ("LEFT", "RIGHT", "UP", "DOWN", "CENTER")


def colour(net: str) -> tuple[int, int, int]:
    for key, rgb in COLOURS.items():
        if net == key or net.endswith("_" + key) or net.startswith(key + "_") or key in net.split("_"):
            return rgb
    if any(net.endswith(n) for n in NAV):
        return COLOURS["NAV"]
    return (90, 90, 90)


def _font(size: int) -> Any:
    try:
        return ImageFont.truetype("DejaVuSans.ttf", size)
    except OSError:
        return ImageFont.load_default(size)


def draw(nets: dict[str, set[tuple[str, str]]], config: Any, build: str) -> Image.Image:
    """The diagram of one build, as an image."""
    shown = {name: nodes for name, nodes in nets.items() if len(nodes) > 1 and not name.startswith("__")}
    header = {pin: name for name, nodes in shown.items() for ref, pin in nodes if ref == "J_PI"}
    order = sorted(shown, key=lambda n: (n not in header.values(), _seat_key(n), n))
    big, small = _font(22), _font(14)
    row, width, x1 = 22, 1700, 560
    measure = ImageDraw.Draw(Image.new("RGB", (1, 1)))
    lines = {name: _wrap(measure, _ends(shown[name]), small, width - x1 - 190) for name in order}
    height = max(40 * 22 + 140, sum(len(v) for v in lines.values()) * row + 140)
    img = Image.new("RGB", (width, height), "white")
    d = ImageDraw.Draw(img)
    d.text((20, 15), f"table-host {build}: wiring (from schematics/out/table-{build}.net)", fill="black",
           font=big)
    d.text((20, 45), "Pi header seen from above, pin 1 top left. Wire colours as drawn; every line on the "
           "right is one net: solder all its ends together.", fill="black", font=small)
    # The header: 2 x 20 pins.
    x0, y0 = 250, 90
    for pin in range(1, 41):
        col, line = (pin - 1) % 2, (pin - 1) // 2
        x, y = x0 + col * 26, y0 + line * 22
        net = header.get(str(pin))
        fill = colour(net) if net else (220, 220, 220)
        d.rectangle((x, y, x + 18, y + 18), fill=fill, outline="black")
        d.text((x + 3, y + 2), str(pin), fill="white" if net else "black", font=_font(10))
        name = parts.PI_HEADER[pin]
        label = f"{net}  {name}" if net else name
        if col == 0:
            d.text((x - 10 - d.textlength(label, font=small), y + 1), label, fill="black", font=small)
        else:
            d.text((x + 28, y + 1), f"{name}  {net}" if net else name, fill="black", font=small)
    # The nets.
    d.text((x1, 70), "net", fill="black", font=small)
    d.text((x1 + 170, 70), "ends (reference pin name)", fill="black", font=small)
    y = 90
    for name in order:
        d.rectangle((x1 - 30, y + 6, x1 - 6, y + 12), fill=colour(name))
        d.text((x1, y), name, fill="black", font=small)
        for text in lines[name]:
            d.text((x1 + 170, y), text, fill="black", font=small)
            y += row
    return img


def _ends(nodes: set[tuple[str, str]]) -> list[str]:
    ends = sorted(nodes, key=lambda node: (node[0] != "J_PI", node))
    return [f"{ref} {pin} ({parts.pin_name(ref, pin)})" for ref, pin in ends]


def _wrap(d: ImageDraw.ImageDraw, ends: list[str], font: Any, room: float) -> list[str]:
    out = [""]
    for end in ends:
        candidate = f"{out[-1]}  —  {end}" if out[-1] else end
        if out[-1] and d.textlength(candidate, font=font) > room:
            out.append(end)
        else:
            out[-1] = candidate
    return out


def _seat_key(net: str) -> tuple[int, str]:
    head = net.split("_", 1)[0]
    return (int(head[1:]), net) if head.startswith("S") and head[1:].isdigit() else (0, net)
