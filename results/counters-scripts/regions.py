import sys,collections
f=sys.argv[1]; want=sys.argv[2]
exec(open('an.py').read().split("tot=sum")[0].replace("f=sys.argv[1]; want=sys.argv[2]",""))
base=min(int(k,16) for k in agg)
tot=sum(v[1] for v in agg.values()); tte=sum(v[2] for v in agg.values())
R=[('apply: row',0x4010,0x4270),('apply: entries',0x4280,0x46b0),('apply: row end',0x46c0,0x47a0),('update pass',0x4c80,0x4e60)]
acc=collections.Counter()
for k,v in agg.items():
    o=int(k,16)-base; name='rest'
    for n,lo,hi in R:
        if lo<=o<=hi: name=n
    acc[name]+=v[1]
steps=agg[hex(base+0x4010)][1] if hex(base+0x4010) in agg else None
print(f"{want} in {f}: {tot/1e6:.1f} M warp inst, {tte/tot:.1f} lanes; row-steps {steps/1e6 if steps else 0:.2f} M")
for n,c in acc.most_common(): print(f"  {n:16s} {c/1e6:7.1f} M {c/tot*100:5.1f}%  per row-step {c/steps if steps else 0:6.1f}")
