#!/usr/bin/env python3
"""Print `octile gram` summaries' seconds and each tile's phase marks (ms from the tile's start; the first 12 tiles).

Usage: python3 benches/scale/phases.py SUMMARY.json [...]"""
import json, sys, statistics
for f in sys.argv[1:]:
    s = json.load(open(f))
    tl = s.get("timeline", {})
    tiles = tl.get("tiles", [])
    print(f"{f}: seconds {s['seconds']:.4f} tiles {len(tiles)} pairs {s.get('pairs', '?')}")
    for t in tiles[:12]:
        st = t[5]
        ph = " ".join(f"{p[0]}:{1000*(p[1]-st):.2f}" for p in t[9]) if len(t) > 9 else ""
        print(f"  dev {t[4]} [{t[0]}:{t[1]}]x[{t[2]}:{t[3]}] start {1000*st:.2f} computed +{1000*(t[6]-st):.2f} written +{1000*(t[8]-st):.2f} | {ph}")
