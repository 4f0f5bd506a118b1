import csv,sys,collections,re
f=sys.argv[1]; want=sys.argv[2]
secs=[];cur=None
rows=list(csv.reader(open(f)))
i=0
while i<len(rows):
    r=rows[i]
    if r and r[0]=='Kernel Name':
        name=r[1]; hdr=rows[i+1]; i+=2; body=[]
        while i<len(rows) and not (rows[i] and rows[i][0]=='Kernel Name'):
            body.append(rows[i]); i+=1
        secs.append((name,hdr,body))
    else: i+=1
agg=collections.OrderedDict(); n=0
for name,hdr,body in secs:
    if name!=want: continue
    n+=1
    H={h:j for j,h in enumerate(hdr)}
    for b in body:
        if len(b)<len(hdr)-2: continue
        a=b[H['Address']]; src=b[H['Source']]
        ie=float(b[H['Instructions Executed']] or 0); te=float(b[H['Thread Instructions Executed']] or 0)
        st=float(b[H['Warp Stall Sampling (All Samples)']] or 0)
        if a not in agg: agg[a]=[src,0,0,0]
        agg[a][1]+=ie; agg[a][2]+=te; agg[a][3]+=st
tot=sum(v[1] for v in agg.values()); tst=sum(v[3] for v in agg.values())
print(f"{want}: {n} launches, {len(agg)} SASS, warp inst {tot/1e6:.1f} M, stall samples {tst:.0f}")
ops=collections.Counter(); opst=collections.Counter()
for a,(s,ie,te,st) in agg.items():
    op=s.split()[0] if s else '?'
    if op.startswith('@'): op=s.split()[1]
    op=op.split('.')[0]
    ops[op]+=ie; opst[op]+=st
for op,c in ops.most_common(25): print(f"  {op:10s} {c/tot*100:5.1f}% inst  {opst[op]/tst*100:5.1f}% stalls")
if len(sys.argv)>3:
    thr=float(sys.argv[3])
    for a,(s,ie,te,st) in agg.items():
        if ie>=thr*tot: print(f"{a} {ie/1e6:8.2f}M {te/max(ie,1):5.1f} {st:6.0f}  {s}")
