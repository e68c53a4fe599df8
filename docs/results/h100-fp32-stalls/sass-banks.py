"""Static register-bank count over the FFMAs of kernels in a cubin: how many FFMAs read all
three source registers from one bank (register number mod 4), with and without an operand
marked `.reuse`, and how many have two non-reused operands in one bank.

Usage: CUOBJDUMP=/path/to/cuobjdump python3 sass-banks.py KERNELS.cubin ENTRY [ENTRY ...]
(cuobjdump from PyPI's nvidia-cuda-cuobjdump, with nvdisasm from nvidia-cuda-nvdisasm on PATH).
The cubin: `ptxas -arch=sm_90a` of the PTX module. Output: `sass-banks.txt`.
"""
import os
import re
import subprocess
import sys
from collections import Counter

FFMA = re.compile(
    r"FFMA\S*\s+R\d+,\s*(-?R\d+)(\.reuse)?,\s*(-?R\d+)(\.reuse)?,\s*(-?R\d+)(\.reuse)?"
)
cuobjdump = os.environ.get("CUOBJDUMP", "cuobjdump")
cubin = sys.argv[1]
for entry in sys.argv[2:]:
    sass = subprocess.run(
        [cuobjdump, "-sass", "-fun", entry, cubin], capture_output=True, text=True, check=True
    ).stdout
    counts = Counter()
    total = 0
    for line in sass.splitlines():
        match = FFMA.search(line)
        if not match:
            continue
        total += 1
        registers = [int(match.group(i).lstrip("-R")) for i in (1, 3, 5)]
        reused = [bool(match.group(i)) for i in (2, 4, 6)]
        three = len({r % 4 for r in registers}) == 1
        live = [r % 4 for r, u in zip(registers, reused) if not u]
        counts["3way"] += three
        counts["3way_noreuse"] += three and not any(reused)
        counts["live_dup"] += len(live) != len(set(live))
        counts["anyreuse"] += any(reused)
    print(entry, total, dict(counts))
