"""The virtual Raspberry Pi: `./dev hil` boots a Linux kernel under QEMU and runs the table on it."""
