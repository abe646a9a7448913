"""Hardware-in-the-loop runs: the real code against real interpreters and kernels.

`./dev hil` (`python -m hil`) boots a Linux kernel under QEMU and runs the table on it; docs/virtual-pi.md.
"""
