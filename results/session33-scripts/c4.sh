#!/usr/bin/env bash
# session 33, call 5 (as run, one line there): gradient.sh (GraphDot's eval_gradient vs octile's gradient calls, FreeSolv
# GPR) with the bundle in .carry/bundle.tar.xz. Calls 3 and 4 were c3.sh with GRAD=0 BUNDLE=.carry/bundle.tar.xz and
# CSETS="mutag:3 nws:3 chembl:3", then CSETS="nws_smallq:3 ba:3 proteins:1".
B=/tmp/b; mkdir -p $B /tmp/sets; [ -x $B/octile ] || xz -dc .carry/bundle.tar.xz | tar -xf - -C $B; [ -f /tmp/sets/chembl.jsonl ] || xz -dc .carry/sets.tar.xz | tar -xf - -C /tmp/sets; OUT=$OUT/gradient OCT_WHEEL=$B/wheels SETS_DIR=/tmp/sets FREESOLV_DIR=.peers/sets/freesolv PEER_WHEELS=.peers/wheels PEER_PREBUILT=.peers/prebuilt timeout 150 bash benches/peers/graphdot/gradient.sh 2>&1 | tail -40
