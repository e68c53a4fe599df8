import csv,re,sys
from collections import defaultdict
def analyze(f, verbose=True):
    rows=list(csv.reader(open(f)))
    hdr=rows[1]; data=rows[2:]
    idx={h:i for i,h in enumerate(hdr)}
    prev=None; res=[]
    for r in data:
        src=r[1].strip()
        m=re.match(r'(@\S+\s+)?FFMA\S*\s+(R\d+),\s*(-?R\d+)(\.reuse)?,\s*(-?R\d+)(\.reuse)?,\s*(-?R\d+)',src)
        if not m: prev=None; continue
        regs=[int(m.group(i).lstrip('-R')) for i in (3,5,7)]
        n=int(r[idx['Instructions Executed']] or 0)
        reused=[prev is not None and prev[i]==regs[i] for i in range(3)]
        prev=regs
        if n<1e5: continue
        res.append((regs,reused,int(r[idx['stall_dispatch']] or 0),int(r[idx['# Samples']] or 0)))
    out={}
    for nb in (2,4):
        g=defaultdict(lambda:[0,0])
        for regs,reused,d,s in res:
            live=[x%nb for x,u in zip(regs,reused) if not u]
            conflict = len(live)!=len(set(live))
            g[conflict][0]+=1; g[conflict][1]+=d
        out[nb]={k:(v[0],round(v[1]/v[0],1)) for k,v in g.items()}
    if verbose: print(f, len(res), out)
    return res
for f in sys.argv[1:]: analyze(f)
