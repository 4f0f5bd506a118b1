#!/usr/bin/env bash
# session 33, call 3: GraphDot 0.8.1 side by side with the bundle in $BUNDLE (default .carry/s33/bundle-new.tar.xz): compare.sh (plain Gram, six sets) then gradient.sh (eval_gradient, FreeSolv GPR)
set -u
B=/tmp/b; O=${OUT:-/tmp/out}; mkdir -p $O /tmp/sets
[ -x $B/octile ] || { mkdir -p $B; xz -dc ${BUNDLE:-.carry/s33/bundle-new.tar.xz} | tar -xf - -C $B; }
[ -f /tmp/sets/chembl.jsonl ] || xz -dc .carry/sets.tar.xz | tar -xf - -C /tmp/sets
OUT=$O/compare OCTILE_RUNS=5 SETS="${CSETS:-nws:3 nws_smallq:3 ba:3 mutag:3 chembl:3 proteins:1}" SETS_DIR=/tmp/sets PEER_WHEELS=.peers/wheels PEER_PREBUILT=.peers/prebuilt OCT=$B/octile timeout 300 bash benches/peers/graphdot/compare.sh 2>&1 | tail -25
[ "${GRAD:-1}" = 1 ] && OUT=$O/gradient OCT_WHEEL=$B/wheels SETS_DIR=/tmp/sets FREESOLV_DIR=.peers/sets/freesolv PEER_WHEELS=.peers/wheels PEER_PREBUILT=.peers/prebuilt timeout 280 bash benches/peers/graphdot/gradient.sh 2>&1 | tail -30
