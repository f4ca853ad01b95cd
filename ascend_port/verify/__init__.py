"""``ascend-port verify``: the ported project's commands run under the emulator, and what stops them."""
