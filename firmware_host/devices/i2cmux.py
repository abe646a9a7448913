"""Which /dev/i2c-N each TCA9548A channel became, read from sysfs when a display is opened.

No file can say it in advance. The kernel's pca954x driver adds each channel
without a fixed number (drivers/i2c/muxes/i2c-mux-pca954x.c:
`i2c_mux_add_adapter(muxc, 0, num)`), so the I2C core hands out the next free
number from one past the highest "i2c" alias in the device tree
(drivers/i2c/i2c-core-base.c, `i2c_init`: `of_alias_get_highest_id("i2c")`).
A Pi 4's aliases reach i2c20/i2c21, so its channels start at 22 or later; a
Pi 5's reach i2c10, so from 11 on; loading order can move them again.

What sysfs does show, per the kernel source:
- an I2C device is `/sys/bus/i2c/devices/<bus>-<address as %04x>`
  (i2c-core-base.c, `i2c_dev_set_name`: `"%d-%04x"`), so the mux at 0x70 on
  i2c-1 is `1-0070`;
- when its driver adds channel n, the mux's directory gets a link `channel-<n>`
  to the channel's adapter directory `i2c-<N>` (drivers/i2c/i2c-mux.c,
  `i2c_mux_add_adapter`: `sysfs_create_link(&muxc->dev->kobj,
  &priv->adap.dev.kobj, "channel-%u")`).
So `readlink /sys/bus/i2c/devices/1-0070/channel-0` ends in `i2c-22` on a Pi 4.
The bus opens as /dev/i2c-22 only while the i2c-dev driver has it: that driver
names its class device after the adapter (drivers/i2c/i2c-dev.c,
`i2cdev_attach_adapter`: `"i2c-%d"`), i.e. /sys/class/i2c-dev/i2c-22.

tests/golden/i2c-mux-sysfs-linux-6.1.txt is this layout as Linux 6.1 showed it
in a VM (its own i2c core, i2c-mux core and i2c-dev); the tests replay it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..system.errors import I2CBusMissing
from .parts import MISSING, OK, UNEXPECTED, Check, Part

if TYPE_CHECKING:
    from ..config import TableConfig

SYSFS = Path("/sys")
CHANNELS = 8  # a TCA9548A / PCA9548


def mux_device(parent: int, address: int, sysfs: Path = SYSFS) -> Path:
    """The mux's directory in sysfs: `/sys/bus/i2c/devices/1-0070`."""
    return sysfs / "bus" / "i2c" / "devices" / f"{parent}-{address:04x}"


def overlay_line(parent: int, address: int) -> str:
    """The config.txt line that makes the kernel run this mux (on the Pi's i2c_arm bus, i2c-1)."""
    line = f"dtoverlay=i2c-mux,pca9548,addr=0x{address:02x}"
    return line if parent == 1 else f"{line} (with the parameter that puts it on i2c-{parent})"


def channel_bus(parent: int, address: int, channel: int, sysfs: Path = SYSFS) -> int:
    """N of /dev/i2c-N for one channel of the mux at `address` on i2c-`parent`."""
    mux = f"i2c-mux at 0x{address:02x} on i2c-{parent}"
    device = mux_device(parent, address, sysfs)
    if not device.is_dir():
        raise I2CBusMissing(f"no {mux} in sysfs ({device} missing): is "
                            f"`{overlay_line(parent, address)}` in config.txt and the box rebooted?")
    link = device / f"channel-{channel}"
    try:
        target = os.readlink(link)
    except FileNotFoundError:
        present = sorted(int(p.name[8:]) for p in device.glob("channel-*") if p.name[8:].isdigit())
        if present:
            raise I2CBusMissing(
                f"the {mux} has channels {', '.join(map(str, present))} but no channel-{channel} in "
                f"sysfs ({link} missing): is it a pca9548 (8 channels) in config.txt's dtoverlay line?"
            ) from None
        bound = (device / "driver").exists()
        why = ("its driver added no channels" if bound else
               "no driver has taken it (yet): the i2c_mux_pca954x module is not loaded, or the chip "
               f"did not answer (`i2cdetect -y {parent}` shows {address:02x} or UU when it is there)")
        raise I2CBusMissing(f"the {mux} has no channel-{channel} in sysfs ({link} missing): {why}; "
                            f"`dmesg | grep pca954x` says more") from None
    except OSError as exc:
        raise I2CBusMissing(f"the {mux}: cannot read {link}: {exc.strerror or exc}") from None
    name = Path(target).name
    found = re.fullmatch(r"i2c-(\d+)", name)
    if found is None:
        raise I2CBusMissing(f"the {mux}: {link} points to {target}, not to an i2c-N bus")
    return int(found.group(1))


IDLE_AS_IS, IDLE_DISCONNECT = -1, -2
"""The pca954x driver's `idle_state` (Documentation/ABI/testing/sysfs-bus-i2c-devices-pca954x):
-1 leaves the mux on its last channel (the default), -2 disconnects it after every transfer (the
i2c-mux overlay's `disconnect_on_idle`), 0..7 parks it on that channel."""


def idle_state(parent: int, address: int, sysfs: Path = SYSFS) -> int:
    """What the kernel does with the mux between transfers, read from sysfs."""
    mux = f"i2c-mux at 0x{address:02x} on i2c-{parent}"
    device = mux_device(parent, address, sysfs)
    if not device.is_dir():
        raise I2CBusMissing(f"no {mux} in sysfs ({device} missing): is "
                            f"`{overlay_line(parent, address)}` in config.txt and the box rebooted?")
    path = device / "idle_state"
    try:
        text = path.read_text().strip()
    except FileNotFoundError:
        raise I2CBusMissing(f"the {mux} has no idle_state ({path} missing): no pca954x driver has "
                            "taken it; `dmesg | grep pca954x` says more") from None
    except OSError as exc:
        raise I2CBusMissing(f"the {mux}: cannot read {path}: {exc.strerror or exc}") from None
    try:
        return int(text)
    except ValueError:
        raise I2CBusMissing(f"the {mux}: {path} holds {text[:40]!r}, not a number") from None


def resolve_bus(screen: Any, muxes: Iterable[Any], sysfs: Path = SYSFS) -> int:
    """N of /dev/i2c-N a seat's I2C screen (config.SeatScreen) is on: its fixed `bus` when it
    has one (someone knows better), else its mux channel's bus as the kernel numbered it."""
    if screen.bus is not None:
        return int(screen.bus)
    if screen.mux is None or screen.channel is None:
        raise I2CBusMissing("the screen names neither a fixed bus nor a mux and channel")
    found = [m for m in muxes if m.address == screen.mux]
    if len(found) != 1:
        raise I2CBusMissing(f"{len(found) or 'no'} [[i2c_muxes]] entries at 0x{screen.mux:02x}: "
                            "give the screen a fixed bus = N")
    return channel_bus(found[0].bus, found[0].address, screen.channel, sysfs)


def check_i2c_dev(bus: int, sysfs: Path = SYSFS) -> None:
    """Say exactly why /dev/i2c-`bus` cannot be there, before luma's "device not found"."""
    if (sysfs / "class" / "i2c-dev" / f"i2c-{bus}").exists():
        return
    adapter = sysfs / "bus" / "i2c" / "devices" / f"i2c-{bus}"
    if not adapter.exists():
        raise I2CBusMissing(f"no bus i2c-{bus} in sysfs ({adapter} missing): `i2cdetect -l` lists "
                            "the buses there are")
    raise I2CBusMissing(f"no /dev/i2c-{bus}: the i2c-dev module is not loaded ({sysfs}/class/i2c-dev/"
                        f"i2c-{bus} missing; `sudo modprobe i2c-dev`, and list i2c-dev in "
                        "/etc/modules-load.d/ so it loads at boot)")


def probe_mux(mux: Any, sharing: Sequence[int], sysfs: Path) -> Check:
    """A TCA9548A's `idle_state` as the kernel runs it. Alone on its bus it may stay on its last
    channel; beside another mux on the same bus it must disconnect after every transfer (-2, the
    overlay's disconnect_on_idle, hardware/README.md), or each keeps a channel open and a screen
    at 0x3C behind one takes the frames meant for the 0x3C behind the other."""
    check = Check(f"mux 0x{mux.address:02x}", f"i2c-{mux.bus}")
    try:
        state = idle_state(mux.bus, mux.address, sysfs)
    except I2CBusMissing as exc:
        check.result, check.detail = MISSING, str(exc)
        return check
    what = {IDLE_AS_IS: "stays on its last channel", IDLE_DISCONNECT: "disconnects after every transfer"}.get(
        state, f"parks on channel {state}")
    seen = f"idle_state {state}: {what}"
    if state == IDLE_DISCONNECT or not sharing:
        check.result = OK
        check.detail = seen + ("" if sharing else " (alone on its bus)")
        return check
    others = ", ".join(f"0x{a:02x}" for a in sharing)
    path = mux_device(mux.bus, mux.address, sysfs) / "idle_state"
    check.result = UNEXPECTED
    line = f"dtoverlay=i2c-mux,pca9548,addr=0x{mux.address:02x},disconnect_on_idle"
    check.detail = (f"{seen}, but it shares i2c-{mux.bus} with the mux at {others}: a screen behind one "
                    "takes the frames for the screen at its address behind the other. config.txt needs "
                    f"`{line}` (install.sh writes it; reboot), which a Raspberry Pi OS kernel has since "
                    f"2024 (update it); until the next boot: echo -2 | sudo tee {path}")
    return check


class I2CMuxes(Part):
    """The TCA9548A multiplexers the configuration names, as the kernel runs them: a part only
    the self-test looks at (their channels are buses the screens open themselves)."""

    name = "I2C multiplexers"

    def __init__(self, muxes: Sequence[Any], sysfs: Path | None) -> None:
        """`sysfs`: where the board's kernel shows them (None: a board without, emulated)."""
        self.muxes, self.sysfs = list(muxes), sysfs

    def probe(self, config: TableConfig) -> list[Check]:
        if self.sysfs is None:
            return []
        sharing = {id(mux): [m.address for m in self.muxes if m.bus == mux.bus and m is not mux]
                   for mux in self.muxes}
        return [probe_mux(mux, sharing[id(mux)], self.sysfs) for mux in self.muxes]

    def close(self) -> None:
        """Nothing held: the kernel's driver owns them."""
