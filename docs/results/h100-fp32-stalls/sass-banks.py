import re,sys,subprocess,os
from collections import Counter
cubin=sys.argv[1]
env=dict(os.environ, PATH="/tmp/nvd/nvidia/cu13/bin:"+os.environ["PATH"])
for fun in sys.argv[2:]:
    out=subprocess.run(["/tmp/cuobj/nvidia/cu13/bin/cuobjdump","-sass","-fun",fun,cubin],capture_output=True,text=True,env=env).stdout
    c=Counter(); n=0
    for line in out.splitlines():
        m=re.search(r'FFMA\S*\s+R\d+,\s*(-?R\d+)(\.reuse)?,\s*(-?R\d+)(\.reuse)?,\s*(-?R\d+)(\.reuse)?',line)
        if not m: continue
        n+=1
        regs=[int(m.group(i).lstrip('-R')) for i in (1,3,5)]
        reuse=[bool(m.group(i)) for i in (2,4,6)]
        three=len(set(r%4 for r in regs))==1
        live=[r%4 for r,u in zip(regs,reuse) if not u]
        c['3way']+=three
        c['3way_noreuse']+=three and not any(reuse)
        c['live_dup']+= len(live)!=len(set(live))
        c['anyreuse']+=any(reuse)
    print(fun, n, dict(c))
