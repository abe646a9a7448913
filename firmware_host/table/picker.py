"""A seat's name picker, in the lobby, with the seat's own six buttons.

Up or down opens it (a slap still joins as a guest, as it always has). Then:

- the list: the known players not seated elsewhere, then NEW NAME, PHONE (QR) and GUEST; up and
  down move, a slap chooses, alt closes the picker;
- NEW NAME, letter by letter as an arcade's high-score table: up and down turn the letter under
  the cursor through `LETTERS`, right moves on (a new letter at the end), left back, alt rubs
  out the letter under the cursor (on an empty name it goes back to the list), a slap takes the
  name;
- PHONE (QR): the seat's one-time address as a QR code, for a phone to claim the seat; any
  button closes it.

Pure state: the table keeps one picker a seat that has it open, the seat's screen draws it."""

from __future__ import annotations

from dataclasses import dataclass, field

from .names import NAME_MAX

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ abcdefghijklmnopqrstuvwxyz0123456789-.'"
"""What a name entered at the seat is made of: the font draws every one of them."""
NEW, PHONE, GUEST = "NEW NAME", "PHONE (QR)", "GUEST"
"""The list's last three entries, told from the names by their place in the list, never by text."""


@dataclass
class Picker:
    names: tuple[str, ...]  # the known players free to choose, in order
    mode: str = "list"  # "list", "letters" or "qr"
    index: int = 0
    letters: list[str] = field(default_factory=list)
    cursor: int = 0
    message: str = ""  # why the last choice was refused, until the next press

    @property
    def entries(self) -> list[str]:
        return [*self.names, NEW, PHONE, GUEST]

    def press(self, control: str) -> tuple[str, str | None] | None:
        """What a press means: None while picking, or ("name", NAME), ("guest", None) or
        ("close", None) when the seat has chosen."""
        self.message = ""
        if self.mode == "qr":
            self.mode = "list"
            return None
        if self.mode == "letters":
            return self._letter(control)
        count = len(self.entries)
        if control in ("up", "down"):
            self.index = (self.index + (1 if control == "down" else -1)) % count
        elif control == "alt":
            return ("close", None)
        elif control == "slap":
            offset = self.index - len(self.names)
            if offset < 0:
                return ("name", self.names[self.index])
            if offset == 0:
                self.mode, self.letters, self.cursor = "letters", ["A"], 0
            elif offset == 1:
                self.mode = "qr"
            else:
                return ("guest", None)
        return None

    def _letter(self, control: str) -> tuple[str, str | None] | None:
        if control in ("up", "down"):
            at = LETTERS.find(self.letters[self.cursor])
            self.letters[self.cursor] = LETTERS[(at + (1 if control == "up" else -1)) % len(LETTERS)]
        elif control == "right" and self.cursor + 1 < NAME_MAX:
            self.cursor += 1
            if self.cursor == len(self.letters):
                self.letters.append(self.letters[-1] if self.letters[-1] != " " else "A")
        elif control == "left":
            self.cursor = max(0, self.cursor - 1)
        elif control == "alt":
            if len(self.letters) <= 1:
                self.mode = "list"
                return None
            del self.letters[self.cursor]
            self.cursor = min(self.cursor, len(self.letters) - 1)
        elif control == "slap":
            text = "".join(self.letters).strip()
            if not text:
                self.mode = "list"
                return None
            return ("name", text)
        return None

    @property
    def text(self) -> str:
        return "".join(self.letters)

    def key(self) -> tuple[object, ...]:
        """What the screen shows: when it changes, the screen is drawn again."""
        return (self.mode, self.index, self.text, self.cursor, self.names, self.message)
