import csv,collections,sys
f,want=sys.argv[1],sys.argv[2]
rows=list(csv.reader(open(f)))
tot=collections.Counter(); i=0; name=None; hdr=[]
while i<len(rows):
    r=rows[i]
    if r and r[0]=='Kernel Name':
        name=r[1]; hdr=rows[i+1]; H={h:j for j,h in enumerate(hdr)}; i+=2; continue
    if name==want and len(r)==len(hdr):
        for h,j in H.items():
            if h.startswith('stall_') and '(Not Issued)' not in h:
                try: tot[h[6:]]+=float(r[j] or 0)
                except: pass
    i+=1
s=sum(tot.values())
print(want, f, ' '.join(f"{k} {v/s*100:.1f}%" for k,v in tot.most_common(7)))
