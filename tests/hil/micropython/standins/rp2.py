# Stand-in for MicroPython's `rp2` on the rp2 port, for the test bench's MicroPython (WebAssembly
# port, which has no PIO): enough of the PIO to run the LED firmware's program as the RP2040
# datasheet defines it, and to say what the chain would receive and with what timing.
#
# Assembling follows MicroPython's rp2.asm_pio (ports/rp2/modules/rp2.py): the decorated
# function runs twice (labels, then instructions) with its module's globals replaced by the
# assembler's names; each instruction is encoded as the RP2040 datasheet's section 3.4 gives
# it (16 bits: 3 of opcode, 5 of delay and side-set, 8 of arguments), the side-set in the top
# bits of the delay field (3.5.1), an instruction without one makes side-set optional (an
# enable bit), and a program without wrap() wraps after its last instruction.
#
# Running: StateMachine.put() pushes words as MicroPython's does (a buffer's elements, each
# shifted left by `shift`). The state machine then executes the encoded instructions cycle by
# cycle (3.4: JMP, OUT, MOV, SET; an instruction takes 1 + its delay cycles; side-set drives
# the pin from the cycle the instruction is issued, even if it stalls, 3.5.1; wrap 3.5.2;
# autopull refills the OSR from the TX FIFO once the shift count reaches the threshold and an
# OUT stalls while the FIFO is empty, 3.5.4; OUT shifts left from the top of the OSR, 3.5.3).
# To keep a frame cheap under WebAssembly only the first SIMULATED words of each put go through
# the state machine: their waveform is decoded against the WS2812B datasheet's windows (a high
# of T0H or T1H, each 0.4/0.8 us +-150 ns, 1.25 us +-600 ns a bit) and must give back the bits
# pushed. Every word's bits are reported as the bytes the chain receives ("bitstream", as the
# machine.bitstream stand-in reports them; a buffer pushed byte by byte to the top of its word
# and shifted out 8 bits at a time is its own bytes), the timing for the first few frames with
# both 0s and 1s, and for any whose bits came out wrong ("pio" lines, JSON).

try:
    import hil  # the bench's JS module (tests/hil/micropython/runner.mjs)
except ImportError:
    hil = None
if not hasattr(hil, "report"):  # under CPython (a test) `hil` may be the tests' package
    hil = None

import binascii
import json

SIMULATED = 24  # words of each put run through the state machine (8 LEDs of G, R, B)
T0H_NS = (250, 550)  # WS2812B datasheet: T0H 0.4 us +-150 ns
T1H_NS = (650, 950)  # T1H 0.8 us +-150 ns
T0L_NS = (700, 1000)  # T0L 0.85 us +-150 ns
T1L_NS = (300, 600)  # T1L 0.45 us +-150 ns
BIT_NS = (650, 1850)  # TH + TL = 1.25 us +-600 ns

reports = []  # the "pio" reports so far (a test in this interpreter may read them)
puts = 0
last_pin = None  # the GPIO the last put went out on (the program's side-set pin)


class PIO:
    IN_LOW = 0
    IN_HIGH = 1
    OUT_LOW = 2
    OUT_HIGH = 3
    SHIFT_LEFT = 0
    SHIFT_RIGHT = 1
    JOIN_NONE = 0
    JOIN_TX = 1
    JOIN_RX = 2


class PIOASMError(Exception):
    pass


# What the assembler puts in the program's globals (the datasheet's operand encodings).
NAMES = {"pins": 0, "x": 1, "y": 2, "null": 3, "pindirs": 4, "pc": 5, "status": 5, "isr": 6, "osr": 7,
         "not_x": 1, "x_dec": 2, "not_y": 3, "y_dec": 4, "x_not_y": 5, "pin": 6, "not_osre": 7,
         "block": 0x21, "noblock": 0x01, "iffull": 0x40, "ifempty": 0x40}


class Program:
    def __init__(self, sideset_init, out_shiftdir, autopull, pull_thresh):
        self.words = []
        self.labels = {}
        self.sideset_init = sideset_init
        self.sideset_count = 0 if sideset_init is None else 1
        self.sideset_opt = False
        self.out_shiftdir = out_shiftdir
        self.autopull = autopull
        self.pull_thresh = pull_thresh or 32
        self.wrap_target_at = 0
        self.wrap_at = None
        self.pass_ = 0
        self.count = 0
        self.sided = 0

    # ---- directives
    def wrap_target(self):
        self.wrap_target_at = self.count

    def wrap(self):
        self.wrap_at = self.count - 1

    def label(self, name):
        if self.pass_ == 0:
            if name in self.labels:
                raise PIOASMError("duplicate label " + name)
            self.labels[name] = self.count

    # ---- instructions
    def _emit(self, word, label=None):
        self.count += 1
        if self.pass_ == 1:
            if label is not None:
                if label not in self.labels:
                    raise PIOASMError("unknown label " + str(label))
                word |= self.labels[label]
            self.words.append(word)
        return self

    def jmp(self, cond, label=None):
        if label is None:
            cond, label = 0, cond
        return self._emit(0x0000 | cond << 5, label)

    def out(self, dest, bits):
        if not 0 < bits <= 32:
            raise PIOASMError("invalid bit count")
        return self._emit(0x6000 | dest << 5 | (bits & 31))

    def mov(self, dest, src):
        return self._emit(0xA000 | dest << 5 | src)

    def nop(self):
        return self.mov(2, 2)  # mov y, y

    def set(self, dest, data):
        return self._emit(0xE000 | dest << 5 | data)

    def _unsupported(self, *args):
        raise PIOASMError("this stand-in runs JMP, OUT, MOV (nop) and SET only")

    def side(self, value):
        self.sided += 1
        if self.pass_ == 1:
            if not self.sideset_count:
                raise PIOASMError("no sideset")
            bits = self.sideset_count + (1 if self.sideset_opt else 0)
            self.words[-1] |= (1 << 12 if self.sideset_opt else 0) | value << (13 - bits)
        return self

    def __getitem__(self, delay):
        if self.pass_ == 1:
            bits = self.sideset_count + (1 if self.sideset_opt else 0)
            if delay > (31 >> bits):
                raise PIOASMError("delay too large")
            self.words[-1] |= delay << 8
        return self

    def start(self, pass_):
        if pass_ == 1:
            self.sideset_opt = self.sideset_count > 0 and self.sided != self.count
            if self.wrap_at is None:
                self.wrap_at = self.count - 1
        self.pass_, self.count, self.sided = pass_, 0, 0


def asm_pio(sideset_init=None, out_shiftdir=0, autopull=False, pull_thresh=32, **unused):
    def assemble(f):
        prog = Program(sideset_init, out_shiftdir, autopull, pull_thresh)
        names = dict(NAMES)
        for name in ("wrap_target", "wrap", "label", "jmp", "out", "mov", "nop", "set"):
            names[name] = getattr(prog, name)
        for name in ("word", "wait", "in_", "push", "pull", "irq"):
            names[name] = prog._unsupported
        glob = f.__globals__
        kept = dict(glob)
        glob.clear()
        glob.update(names)
        try:
            for pass_ in (0, 1):
                prog.start(pass_)
                f()
        finally:
            glob.clear()
            glob.update(kept)
        return prog

    return assemble


class StateMachine:
    def __init__(self, id, prog, freq=125_000_000, sideset_base=None, **unused):
        self.id, self.prog, self.freq = id, prog, freq
        self.pin = sideset_base
        self.level = 1 if prog.sideset_init == PIO.OUT_HIGH else 0
        if sideset_base is not None:
            sideset_base.init(sideset_base.OUT)
        self.running = False
        self.writes = 0

    def active(self, value=None):
        if value is not None:
            self.running = bool(value)
        return self.running

    def tx_fifo(self):
        return 0  # the simulated words went through at once

    def put(self, value, shift=0):
        global puts, last_pin
        if not self.running:
            raise ValueError("state machine not active")
        items = (value,) if isinstance(value, int) else value
        words = [(items[i] << shift) & 0xFFFFFFFF for i in range(min(SIMULATED, len(items)))]
        self.writes += 1
        puts += 1
        last_pin = self.pin.pin if self.pin is not None else None
        decoded, timing = self._run(words)
        wanted = self._bits(words)
        timing["bits_ok"] = decoded == wanted
        if timing["bits_ok"] is False or (len(reports) < 3 and 0 in wanted and 1 in wanted):
            reports.append(timing)
            if hil is not None:
                hil.report("pio " + json.dumps(timing))
        if hil is not None and self.pin is not None:
            if (shift == 24 and self.prog.pull_thresh == 8 and self.prog.out_shiftdir == PIO.SHIFT_LEFT
                    and not isinstance(value, int)):
                sent = bytes(value)  # each element's 8 bits, top first: the elements themselves
            else:
                sent = self._bytes([(v << shift) & 0xFFFFFFFF for v in items])
            hil.report("bitstream " + str(self.pin.pin) + " " + str(self.writes) + " "
                       + binascii.hexlify(sent).decode())

    # ---- what the chain receives
    def _bits(self, words):
        n, left = self.prog.pull_thresh, self.prog.out_shiftdir == PIO.SHIFT_LEFT
        out = []
        for w in words:
            for i in range(n):
                out.append((w >> (31 - i)) & 1 if left else (w >> i) & 1)
        return out

    def _bytes(self, words):
        bits = self._bits(words)
        out = bytearray(len(bits) // 8)
        for i in range(len(out)):
            v = 0
            for b in bits[i * 8 : i * 8 + 8]:
                v = v << 1 | b
            out[i] = v
        return bytes(out)

    # ---- the state machine, cycle by cycle
    def _run(self, words):
        prog = self.prog
        code = prog.words
        fifo = list(words)
        pc, x, y, osr, count = prog.wrap_target_at, 0, 0, 0, 32
        bits = prog.sideset_count + (1 if prog.sideset_opt else 0)
        level, runs, run = self.level, [], 0  # runs: [level, cycles] of the pin
        steps = 0
        while steps < 100000:
            steps += 1
            word = code[pc]
            field = (word >> 8) & 31
            if bits and (not prog.sideset_opt or field & 16):
                side = (field >> (5 - bits)) & ((1 << prog.sideset_count) - 1)
                if side != level:
                    runs.append([level, run])
                    level, run = side, 0
            delay = field & (31 >> bits)
            op = word >> 13
            if op == 3:  # OUT
                if prog.autopull and count >= prog.pull_thresh:
                    if not fifo:
                        break  # stalls, the side-set held: the line idles at its level
                    osr, count = fifo.pop(0), 0
                n = word & 31 or 32
                if prog.out_shiftdir == PIO.SHIFT_LEFT:
                    data, osr = osr >> (32 - n), (osr << n) & 0xFFFFFFFF
                else:
                    data, osr = osr & ((1 << n) - 1), osr >> n
                count += n
                dest = (word >> 5) & 7
                if dest == 1:
                    x = data
                elif dest == 2:
                    y = data
                else:
                    raise PIOASMError("OUT to this destination is not in the stand-in")
                jump = None
            elif op == 0:  # JMP
                cond, target = (word >> 5) & 7, word & 31
                taken = {0: True, 1: x == 0, 2: x != 0, 3: y == 0, 4: y != 0, 5: x != y,
                         7: count < prog.pull_thresh}.get(cond)
                if taken is None:
                    raise PIOASMError("JMP PIN is not in the stand-in")
                if cond == 2:
                    x = (x - 1) & 0xFFFFFFFF
                if cond == 4:
                    y = (y - 1) & 0xFFFFFFFF
                jump = target if taken else None
            elif op == 5:  # MOV
                dest, src = (word >> 5) & 7, word & 7
                value = {1: x, 2: y, 3: 0, 7: osr}.get(src, 0)
                if dest == 1:
                    x = value
                elif dest == 2:
                    y = value
                jump = None
            elif op == 7:  # SET
                dest, data = (word >> 5) & 7, word & 31
                if dest == 1:
                    x = data
                elif dest == 2:
                    y = data
                jump = None
            else:
                raise PIOASMError("opcode not in the stand-in")
            run += 1 + delay
            if jump is not None:
                pc = jump
            elif pc == prog.wrap_at:
                pc = prog.wrap_target_at
            else:
                pc += 1
        runs.append([level, run])
        return self._decode(runs)

    def _decode(self, runs):
        """Bits from the waveform: each high and the low after it, in ns at this clock."""
        ns = 1_000_000_000 / self.freq
        seen = {"t0h": [], "t0l": [], "t1h": [], "t1l": [], "bit": []}
        decoded = []
        runs = [r for r in runs if r[1]]
        for i, (level, cycles) in enumerate(runs):
            if level != 1:
                continue
            high = cycles * ns
            if T1H_NS[0] <= high <= T1H_NS[1]:
                bit = 1
            elif T0H_NS[0] <= high <= T0H_NS[1]:
                bit = 0
            else:
                bit = -1  # neither: the chain would misread it
            decoded.append(bit)
            key = "t1" if bit == 1 else "t0"
            seen[key + "h"].append(high)
            if i + 1 < len(runs) - 1:  # the last low runs into the idle line
                low = runs[i + 1][1] * ns
                seen[key + "l"].append(low)
                seen["bit"].append(high + low)
        timing = {"freq": self.freq, "bits": len(decoded)}
        for key, values in seen.items():
            timing[key + "_ns"] = [round(min(values)), round(max(values))] if values else []
        windows = {"t0h": T0H_NS, "t0l": T0L_NS, "t1h": T1H_NS, "t1l": T1L_NS, "bit": BIT_NS}
        timing["in_spec"] = all(windows[k][0] <= v <= windows[k][1] for k, vs in seen.items() for v in vs)
        return decoded, timing
