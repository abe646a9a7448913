// Runs Python code under the real MicroPython interpreter (its WebAssembly port) with the
// firmware's files in /lib, its standard input and output on a file descriptor the caller
// passes (the device side of a pseudo-terminal), exactly as the board's USB serial.
//
//   node runner.mjs --modules DIR --fd N --report-fd M --lib DIR... [--flash DIR] [--repl 1] --exec CODE
//
// --modules: the folder holding node_modules (installed with `npm ci` from this folder's
// package-lock.json). --fd: read and written as the firmware's sys.stdin/sys.stdout; it must
// be non-blocking (the caller sets O_NONBLOCK). --report-fd: lines from the `hil` JS module
// (stand-ins report what the strip shows). Ends with exit code 0 when --fd reaches end of
// file or I/O error (the pseudo-terminal's other side closed), 1 on a Python exception.
//
// A board's flash, for `tablectl firmware flash` against this interpreter: --flash DIR holds
// the files at the root of the board's filesystem (where mpremote copies; the interpreter's
// current folder, searched before /lib). With --repl 1, once CODE returns (the firmware's
// main.py obeyed STOP) the interpreter goes on as the board's REPL on --fd: MicroPython's own
// event-driven REPL (friendly and raw, as mpremote drives it). machine.reset() (the stand-in,
// through hil.reset) writes the root's files back to --flash and ends with exit code 3: the
// caller starts the interpreter again, as a board boots after a reset.
//
// Ctrl-C as the board sees it. On the rp2 port the USB CDC receive callback takes every byte
// as it arrives, whatever the firmware is doing, and a byte equal to the interrupt character
// empties the receive buffer and schedules KeyboardInterrupt (MicroPython v1.27.0,
// shared/tinyusb/mp_usbd_cdc.c, tud_cdc_rx_cb); pyexec sets that character to Ctrl-C (0x03)
// before it runs main.py (shared/runtime/pyexec.c, parse_compile_execute). The WebAssembly
// port's pyscript variant checks no input for it (its VM hook, mp_js_hook in
// ports/webassembly/library.js, is built only into the standard variant), so this runner does
// both: it sets 0x03 before --exec, and `gather` treats each byte as tud_cdc_rx_cb does, through
// the port's exported mp_hal_get_interrupt_char and mp_sched_keyboard_interrupt. Bytes are
// taken when the firmware reads or polls stdin and whenever it calls into the bench (a strip
// write), the points where JavaScript runs: a byte waiting before then counts as arrived then.
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

function args(argv) {
    const out = { lib: [] };
    for (let i = 2; i < argv.length; i += 2) {
        const key = argv[i].replace(/^--/, "");
        if (key === "lib") out.lib.push(argv[i + 1]);
        else out[key] = argv[i + 1];
    }
    return out;
}

const opts = args(process.argv);
const fd = opts.fd === undefined ? null : Number(opts.fd);
const reportFd = opts["report-fd"] === undefined ? 2 : Number(opts["report-fd"]);
const sleeper = new Int32Array(new SharedArrayBuffer(4));
const pending = [];  // bytes read from fd, not yet taken by the firmware
let outBuf = [];
const chunk = Buffer.alloc(65536);

function sleepMs(ms) {
    Atomics.wait(sleeper, 0, 0, ms);
}

function writeAll(target, data) {
    let off = 0;
    while (off < data.length) {
        try {
            off += fs.writeSync(target, data, off, data.length - off);
        } catch (e) {
            if (e.code !== "EAGAIN") throw e;
            sleepMs(1);
        }
    }
}

function flush() {
    if (outBuf.length && fd !== null) {
        writeAll(fd, Uint8Array.from(outBuf));
        outBuf = [];
    }
}

function finish(code) {
    try { flush(); } catch { /* the other side is gone */ }
    process.exit(code);
}

// Moves what has arrived on fd into `pending`; false when nothing is there yet.
function gather() {
    let n;
    try {
        n = fs.readSync(fd, chunk, 0, chunk.length, null);
    } catch (e) {
        if (e.code === "EAGAIN") return false;
        if (e.code === "EIO") finish(0);  // a pty whose other side closed
        throw e;
    }
    if (n === 0) finish(0);
    const interrupt = mp._module.ccall("mp_hal_get_interrupt_char", "number", [], []);
    for (let i = 0; i < n; i++) {
        if (chunk[i] === interrupt) {  // tud_cdc_rx_cb: clear the ring buffer and stop
            pending.length = 0;
            mp._module.ccall("mp_sched_keyboard_interrupt", "null", [], []);
        } else {
            pending.push(chunk[i]);
        }
    }
    return true;
}

// The firmware's stdin: a byte, blocking until one comes (the board's stdin blocks too).
function stdin() {
    if (fd === null) return null;
    if (pending.length) return pending.shift();
    flush();  // the firmware waits for the host: what it wrote must be on its way
    while (!pending.length) {
        if (!gather()) sleepMs(0.2);
    }
    return pending.shift();
}

const mpjs = path.join(opts.modules, "node_modules", "@micropython",
                       "micropython-webassembly-pyscript", "micropython.mjs");
const { loadMicroPython } = await import(pathToFileURL(mpjs).href);
const mp = await loadMicroPython({
    stdin,
    stdout: (data) => {
        for (const b of data) outBuf.push(b);
        if (outBuf.length >= 4096) flush();
    },
    stderr: (line) => writeAll(2, Buffer.from(line + "\n")),
    linebuffer: false,
    heapsize: 8 * 1024 * 1024,
});

// select.poll on stdin: Emscripten reports POLLIN always; report it only when bytes wait.
const POLLIN = 1, POLLOUT = 4;
mp.FS.getStream(0).stream_ops.poll = () => {
    if (pending.length || (fd !== null && gather() && pending.length)) return POLLIN | POLLOUT;
    flush();  // nothing to read: the firmware waits, what it wrote must be on its way
    return POLLOUT;
};

// The board's flash: the files at the root of its filesystem, written back on a reset.
function persist() {
    if (!opts.flash) return;
    for (const name of mp.FS.readdir("/")) {
        const where = "/" + name;
        if (mp.FS.isFile(mp.FS.stat(where).mode)) fs.writeFileSync(path.join(opts.flash, name), mp.FS.readFile(where));
    }
}

mp.registerJsModule("hil", {
    report: (line) => {
        if (fd !== null) gather();  // the USB interrupt, taken while the firmware works
        writeAll(reportFd, Buffer.from(String(line) + "\n"));
    },
    reset: () => {
        persist();
        finish(3);
    },
});
mp.FS.mkdirTree("/lib");
for (const dir of opts.lib) {
    for (const name of fs.readdirSync(dir)) {
        if (name.endsWith(".py")) mp.FS.writeFile("/lib/" + name, fs.readFileSync(path.join(dir, name)));
    }
}
if (opts.flash) {
    for (const name of fs.readdirSync(opts.flash)) {
        mp.FS.writeFile("/" + name, fs.readFileSync(path.join(opts.flash, name)));
    }
}
mp.FS.chdir("/");
try {
    mp.runPython("import micropython\nmicropython.kbd_intr(3)");  // as pyexec does before main.py
    mp.runPython(opts.exec);
} catch (e) {
    writeAll(2, Buffer.from(String(e.message || e) + "\n"));
    finish(1);
}
if (opts.repl && fd !== null) {
    // The board's REPL after main.py returned: each byte from the host through MicroPython's
    // event-driven REPL, as a board's USB task hands them to pyexec.
    mp.runPython("import micropython\nmicropython.kbd_intr(-1)");  // at the prompt 0x03 is a character
    // This port's files are Emscripten's, whose errno numbers are not MicroPython's: a missing
    // file raises OSError(44) where a board's littlefs raises OSError(2, ENOENT), and mpremote
    // reads only the latter as "not there" (mp_errno.py). os.stat and open (in the REPL's globals,
    // where mpremote's commands run) give a board's numbers.
    mp.runPython(`
import os
_ERRNO = {44: 2, 20: 17, 54: 20, 31: 21, 28: 22, 55: 39, 2: 13}  # ENOENT EEXIST ENOTDIR EISDIR EINVAL ENOTEMPTY EACCES
def _board_errno(f):
    def call(*args):
        try:
            return f(*args)
        except OSError as e:
            raise OSError(_ERRNO.get(e.errno, e.errno))
    return call
os.stat = _board_errno(os.stat)
open = _board_errno(open)`);
    mp.replInit();
    for (;;) {
        if (!pending.length) {
            flush();
            if (!gather()) {
                sleepMs(0.2);
                continue;
            }
            if (!pending.length) continue;
        }
        // mpremote asks for raw-paste mode (Ctrl-E, "A", Ctrl-A) before each command. The board's
        // blocking raw REPL answers "R\x01"; MicroPython's event-driven one (this port's) knows no
        // raw-paste and swallows the bytes, and mpremote would wait for an answer for good. Answer
        // as a device that understands the request but has no raw-paste: "R\x00" (mpremote's
        // transport then sends the command the plain raw-REPL way).
        while (pending.length < 3 && pending[0] === 5 && gather()) { /* the rest of the request */ }
        if (pending[0] === 5 && pending[1] === 65 && pending[2] === 1) {
            pending.splice(0, 3);
            outBuf.push(0x52, 0x00);
            continue;
        }
        mp.replProcessChar(pending.shift());
    }
}
finish(0);
