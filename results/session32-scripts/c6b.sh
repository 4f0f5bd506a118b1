#!/usr/bin/env bash
# session 32: c6's in-memory part again (c5 had unpacked the bundle without its wheels), as run
B=/tmp/b; xz -dc .carry/bundle.tar.xz | tar -xf - -C $B wheels && mkdir -p /tmp/py && python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/py $B/wheels/octile-*.whl && CALLS=5 PYTHONPATH=/tmp/py timeout 180 python3 benches/peers/graphdot/oct_grad.py /tmp/sets $OUT/grad chembl nws mutag --no-fd 2>&1 | grep -v -i warn | tail -16
