"""The seat OLEDs' controllers as their datasheets define them, fed with the bytes a driver sends.

Tests and emulation play what luma.oled sends (through `emulated/oled.py`'s `RecordingInterface`) into these
models and read the picture back out of display RAM, so a driver, an init sequence or a frame
packing that the chip would not understand fails here rather than on a table.

- `SSD1306Model`: Solomon Systech SSD1306 datasheet rev 1.1, §9 command table (Table 9-1)
  and §10.1 (fundamental and addressing commands); the charge pump (8Dh) from its appendix
  "Charge Pump Regulator". Every byte the datasheet does not define is an error.
- `SH1106Model`: Sino Wealth SH1106 datasheet V2.3, "Commands" 1-21. It has no addressing
  modes (only page addressing) and 132 columns; a byte it does not define is kept in
  `undefined` and changes nothing (luma's SH1106 start-up sends the SSD1306's 20h).

The RAM is pages of columns, each byte eight rows with the top one in bit 0 (§8.7 / SH1106
"Display Data RAM"). Orientation commands (segment remap, COM scan direction) are recorded but do
not move RAM: they decide how the panel maps it, which these models leave to `image()`'s reader.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from PIL import Image

from ...system.errors import ControllerError


@dataclass
class _RamModel:
    columns: int = 128
    pages: int = 8
    ram: list[bytearray] = field(default_factory=list)
    page: int = 0
    column: int = 0
    on: bool = False  # AEh/AFh; off after reset
    contrast: int = 0x7F  # 81h; 7Fh after reset (SSD1306 §10.1.7, SH1106 command 5)
    start_line: int = 0
    segment_remap: bool = False
    com_reversed: bool = False
    inverse: bool = False
    charge_pump: bool = False
    commands: int = 0

    def __post_init__(self) -> None:
        self.ram = [bytearray(self.columns) for _ in range(self.pages)]

    def feed(self, transfers: list[tuple[str, bytes]]) -> None:
        """Transfers as `RecordingInterface` keeps them: ("command", bytes) or ("data", bytes)."""
        for kind, payload in transfers:
            if kind == "command":
                self._commands(bytes(payload))
            else:
                for byte in payload:
                    self._write(byte)

    def _commands(self, cmd: bytes) -> None:
        i = 0
        while i < len(cmd):
            i += self._command(cmd, i)
            self.commands += 1

    def _arg(self, cmd: bytes, i: int, count: int) -> bytes:
        if i + count >= len(cmd):
            raise ControllerError(f"{type(self).__name__}: command {cmd[i]:02X}h needs {count} more bytes, "
                                  f"got {len(cmd) - i - 1}")
        return cmd[i + 1:i + 1 + count]

    def _common(self, c: int, cmd: bytes, i: int) -> int | None:
        """Commands both chips define alike; the number of bytes used, or None."""
        if c == 0x81:
            self.contrast = self._arg(cmd, i, 1)[0]
            return 2
        if c in (0xA0, 0xA1):
            self.segment_remap = c == 0xA1
        elif c in (0xA4, 0xA5, 0xE3):  # entire display on/resume, NOP
            pass
        elif c in (0xA6, 0xA7):
            self.inverse = c == 0xA7
        elif c in (0xAE, 0xAF):
            self.on = c == 0xAF
        elif c in (0xC0, 0xC8):
            self.com_reversed = c == 0xC8
        elif 0x40 <= c <= 0x7F:
            self.start_line = c - 0x40
        elif c in (0xA8, 0xD3, 0xD5, 0xD9, 0xDA, 0xDB):  # one argument: timing and panel set-up
            self._arg(cmd, i, 1)
            return 2
        else:
            return None
        return 1

    def _write(self, byte: int) -> None:
        raise NotImplementedError

    def image(self, width: int = 128, height: int = 64, offset: int = 0) -> Image.Image:
        """The picture the RAM holds, from column `offset`: each byte 8 rows, top in bit 0."""
        img = Image.new("1", (width, height), 0)
        px = img.load()
        for page in range(height // 8):
            row = self.ram[page]
            for x in range(width):
                byte = row[x + offset]
                for bit in range(8):
                    if byte >> bit & 1:
                        px[x, page * 8 + bit] = 1
        return img


@dataclass
class SSD1306Model(_RamModel):
    columns: int = 128
    mode: int = 2  # 20h: 0 horizontal, 1 vertical, 2 page addressing (the reset value, §10.1.3)
    col_range: tuple[int, int] = (0, 127)  # 21h (§10.1.4), reset 0-127
    page_range: tuple[int, int] = (0, 7)  # 22h (§10.1.5), reset 0-7
    page_mode_start: int = 0  # 00h-1Fh: page mode's column start (§10.1.1, §10.1.2)

    def _command(self, cmd: bytes, i: int) -> int:
        c = cmd[i]
        common = self._common(c, cmd, i)
        if common is not None:
            return common
        if c <= 0x0F:  # §10.1.1: lower nibble of the page-mode column start
            self.page_mode_start = (self.page_mode_start & 0xF0) | c
            self.column = self.page_mode_start
        elif c <= 0x1F:  # §10.1.2: upper nibble
            self.page_mode_start = (self.page_mode_start & 0x0F) | (c & 0x0F) << 4
            self.column = self.page_mode_start
        elif c == 0x20:  # §10.1.3
            mode = self._arg(cmd, i, 1)[0] & 0x03
            if mode == 3:
                raise ControllerError("SSD1306Model: 20h 03h is an invalid addressing mode (§10.1.3)")
            self.mode = mode
            return 2
        elif c in (0x21, 0x22):  # §10.1.4, §10.1.5: meaningful in horizontal and vertical modes
            start, end = self._arg(cmd, i, 2)
            start, end = (start & 0x7F, end & 0x7F) if c == 0x21 else (start & 0x07, end & 0x07)
            if c == 0x21:
                self.col_range, self.column = (start, end), start
            else:
                self.page_range, self.page = (start, end), start
            return 3
        elif 0xB0 <= c <= 0xB7:  # §10.1.13: page mode's page
            self.page = c - 0xB0
        elif c == 0x8D:  # charge pump appendix: 8Dh, 14h on / 10h off
            self.charge_pump = bool(self._arg(cmd, i, 1)[0] & 0x04)
            return 2
        elif c in (0x2E, 0x2F):  # §10.2.3, §10.2.4: scrolling off/on
            pass
        elif c in (0x26, 0x27):  # §10.2.1: horizontal scroll set-up, six argument bytes
            self._arg(cmd, i, 6)
            return 7
        elif c in (0x29, 0x2A):  # §10.2.2: vertical and horizontal scroll set-up, five
            self._arg(cmd, i, 5)
            return 6
        elif c == 0xA3:  # §10.2.5: vertical scroll area, two
            self._arg(cmd, i, 2)
            return 3
        else:
            raise ControllerError(f"SSD1306Model: {c:02X}h is not an SSD1306 command (Table 9-1)")
        return 1

    def _write(self, byte: int) -> None:
        """GDDRAM write, then the pointer moves as the addressing mode says (§10.1.3 a-c)."""
        self.ram[self.page][self.column] = byte
        (c0, c1), (p0, p1) = self.col_range, self.page_range
        if self.mode == 2:  # page: column wraps to the start, page stays
            self.column = self.page_mode_start if self.column >= 127 else self.column + 1
        elif self.mode == 0:  # horizontal: column, then page
            if self.column >= c1:
                self.column = c0
                self.page = p0 if self.page >= p1 else self.page + 1
            else:
                self.column += 1
        else:  # vertical: page, then column
            if self.page >= p1:
                self.page = p0
                self.column = c0 if self.column >= c1 else self.column + 1
            else:
                self.page += 1


@dataclass
class SH1106Model(_RamModel):
    columns: int = 132
    undefined: list[int] = field(default_factory=list)
    dc_dc: bool = True  # ADh: 8Bh on (reset), 8Ah off (command 10)

    def _command(self, cmd: bytes, i: int) -> int:
        c = cmd[i]
        common = self._common(c, cmd, i)
        if common is not None:
            return common
        if c <= 0x0F:  # command 1: lower column address
            self.column = (self.column & 0xF0) | c
        elif c <= 0x1F:  # command 2: higher column address
            self.column = (self.column & 0x0F) | (c & 0x0F) << 4
        elif 0x30 <= c <= 0x33:  # command 3: pump voltage
            pass
        elif c == 0xAD:  # command 10: DC-DC control, one argument
            self.dc_dc = self._arg(cmd, i, 1)[0] == 0x8B
            return 2
        elif 0xB0 <= c <= 0xB7:  # command 12: page address
            self.page = c - 0xB0
        elif c in (0xE0, 0xEE):  # commands 19, 20: read-modify-write and its end
            pass
        else:
            self.undefined.append(c)
        return 1

    def _write(self, byte: int) -> None:
        """Page addressing only: the column advances; the datasheet gives no wrap past 131, so
        writes there are dropped."""
        if self.column < self.columns:
            self.ram[self.page][self.column] = byte
        self.column += 1


def model_for(kind: str) -> _RamModel:
    return {"ssd1306": SSD1306Model, "sh1106": SH1106Model}[kind]()
