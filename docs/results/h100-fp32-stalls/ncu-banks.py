"""Dispatch-stall samples per FFMA, grouped by how many of its three source registers share a
register bank (register number mod 4), from Nsight Compute's source view exported as CSV
(`ncu -i REPORT --page source --csv --print-source sass`, compressed with xz here).

Usage: python3 ncu-banks.py 2-ncu-v13-v22/v13-sass.csv.xz 5-ncu-scalar-c/v22-scalar-sass.csv.xz
Prints, per file, {most operands in one bank: (FFMAs, dispatch samples per FFMA, all samples
per FFMA)} over the FFMAs executed at least 10^5 times (the main loops).
"""
import csv
import lzma
import re
import sys
from collections import Counter, defaultdict

FFMA = re.compile(r"(@\S+\s+)?FFMA\S*\s+(R\d+),\s*(-?R\d+),\s*(-?R\d+),\s*(-?R\d+)")

for path in sys.argv[1:]:
    rows = list(csv.reader(lzma.open(path, "rt")))
    header = rows[1]
    column = {name: i for i, name in enumerate(header)}
    groups = defaultdict(lambda: [0, 0, 0])
    for row in rows[2:]:
        match = FFMA.match(row[1].strip())
        if not match or int(row[column["Instructions Executed"]] or 0) < 100_000:
            continue
        registers = [int(match.group(i).lstrip("-R")) for i in (3, 4, 5)]
        most = max(Counter(r % 4 for r in registers).values())
        group = groups[most]
        group[0] += 1
        group[1] += int(row[column["stall_dispatch"]] or 0)
        group[2] += int(row[column["# Samples"]] or 0)
    print(path, {k: (v[0], round(v[1] / v[0], 1), round(v[2] / v[0], 1)) for k, v in sorted(groups.items())})
