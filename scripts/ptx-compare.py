#!/usr/bin/env python3
"""Compares the SGEMM ladder kernels (entries sgemm_*, hgemm_*) of two PTX builds, ignoring
what changes when other kernels are added to the module: label numbers, comments, whitespace,
mangled helper names and the names of anonymous shared-memory symbols.

    scripts/ptx-compare.py OLD.ptx NEW.ptx [--all]

Used to show that a build which adds kernels elsewhere (the dequant GEMM) leaves the ladder's
kernels, and so its committed measurements, unchanged. With --all, every entry of OLD is
compared (the dequant kernels too), not only the ladder's."""
import re,sys
def entries(path):
    s=open(path).read()
    parts=re.split(r'\n(?=(?:\.visible|\.weak|\.func|\.extern)?\s*\.(?:entry|func) )', s)
    out={}
    for p in parts:
        m=re.search(r'\.(entry|func)\s+(?:\([^)]*\)\s*)?([A-Za-z0-9_$]+)', p)
        if m:
            body=re.sub(r'\$L__BB\d+_','$L__BB_',p)
            body=re.sub(r'__unnamed_\d+','__unnamed',body)
            body=re.sub(r'_RI?Nv\w+','SYM',body)
            body=re.sub(r'//.*','',body)
            body=re.sub(r'[ \t]+',' ',body)
            body=re.sub(r'anon_\$_[0-9a-f]+_\$_\d+','anon',body)
            out[m.group(2)]=body
    return out
old=entries(sys.argv[1]); new=entries(sys.argv[2])
every='--all' in sys.argv[3:]
ladder=[k for k in old if every or k.startswith(('sgemm_','hgemm_'))]
same=[k for k in ladder if k in new and old[k]==new[k]]
diff=[k for k in ladder if k not in new or old[k]!=new[k]]
print(len(ladder),"entries;" if every else "ladder entries;",len(same),"identical (up to labels, comments, whitespace, mangled helper names);","differ:",diff)
