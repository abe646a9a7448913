"""Hardware-in-the-loop runs: the real code against real interpreters and kernels."""
