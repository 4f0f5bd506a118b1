//! Node reorderings that make fewer, denser octiles.
//!
//! Reverse Cuthill–McKee: breadth-first from a pseudo-peripheral node of each connected component,
//! neighbours by increasing degree, the whole order reversed. It packs the nonzeros near the
//! diagonal, so they fall into fewer 8×8 tiles. The marginalized graph kernel is invariant under
//! node permutation, so the order never changes a kernel value.
use crate::graph::Graph;
use std::collections::VecDeque;

/// Adjacency lists (self-loops dropped), each sorted by neighbour degree then index.
fn neighbours(g: &Graph) -> Vec<Vec<usize>> {
    let n = g.n_nodes();
    let mut adj = vec![Vec::new(); n];
    for e in g.edges() {
        if e.i != e.j {
            adj[e.i as usize].push(e.j as usize);
            adj[e.j as usize].push(e.i as usize);
        }
    }
    let deg: Vec<usize> = adj.iter().map(|a| a.len()).collect();
    for a in &mut adj {
        a.sort_unstable_by_key(|&v| (deg[v], v));
    }
    adj
}

/// BFS levels from `start`; returns (last level's nodes, eccentricity).
fn bfs_last_level(adj: &[Vec<usize>], start: usize, seen: &mut [u32], stamp: u32) -> (Vec<usize>, usize) {
    let mut level = vec![start];
    seen[start] = stamp;
    let mut depth = 0;
    loop {
        let mut next = Vec::new();
        for &u in &level {
            for &v in &adj[u] {
                if seen[v] != stamp {
                    seen[v] = stamp;
                    next.push(v);
                }
            }
        }
        if next.is_empty() {
            return (level, depth);
        }
        level = next;
        depth += 1;
    }
}

/// The RCM permutation as `perm[old] = new`.
pub fn rcm_order(g: &Graph) -> Vec<usize> {
    let n = g.n_nodes();
    let adj = neighbours(g);
    let mut placed = vec![false; n];
    let mut order = Vec::with_capacity(n);
    let mut seen = vec![0u32; n];
    let mut stamp = 0u32;
    let mut by_degree: Vec<usize> = (0..n).collect();
    by_degree.sort_unstable_by_key(|&v| (adj[v].len(), v));
    for &seed in &by_degree {
        if placed[seed] {
            continue;
        }
        // pseudo-peripheral start: walk to a min-degree node of the farthest level while the
        // eccentricity grows (George–Liu)
        let mut start = seed;
        stamp += 1;
        let (mut last, mut ecc) = bfs_last_level(&adj, start, &mut seen, stamp);
        for _ in 0..8 {
            let cand = *last.iter().min_by_key(|&&v| (adj[v].len(), v)).unwrap();
            stamp += 1;
            let (l2, e2) = bfs_last_level(&adj, cand, &mut seen, stamp);
            if e2 > ecc {
                start = cand;
                last = l2;
                ecc = e2;
            } else {
                break;
            }
        }
        let mut queue = VecDeque::from([start]);
        placed[start] = true;
        while let Some(u) = queue.pop_front() {
            order.push(u);
            for &v in &adj[u] {
                if !placed[v] {
                    placed[v] = true;
                    queue.push_back(v);
                }
            }
        }
    }
    let mut perm = vec![0; n];
    for (new, &old) in order.iter().rev().enumerate() {
        perm[old] = new;
    }
    perm
}

/// Which node order packing uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Reordering {
    /// The input order.
    Natural,
    /// Reverse Cuthill–McKee.
    Rcm,
    /// Partition-based: recursive balanced bisection into parts of 8 (the octiles), each cut
    /// minimised by Kernighan–Lin swaps that keep the sizes exact.
    #[default]
    Pbr,
    /// Partition-based through METIS (multilevel recursive bisection, the vendored C library of
    /// the `metis` crate) into ⌈n/8⌉ parts, cut into tile rows of exactly 8, then the same
    /// octile-count refinement as PBR.
    Metis,
}

impl Reordering {
    /// `perm[old] = new` for `g`.
    pub fn order(self, g: &Graph) -> Vec<usize> {
        match self {
            Reordering::Natural => (0..g.n_nodes()).collect(),
            Reordering::Rcm => rcm_order(g),
            Reordering::Pbr => pbr_order(g),
            Reordering::Metis => metis_order(g),
        }
    }
}

/// Node orders computed in this process, by (order kind, graph topology hash). Gram matrices are
/// typically computed many times over the same graphs (hyperparameter searches); PBR on a protein
/// chain takes ~0.5 s, so it is computed once. At most `ORDER_CACHE_MAX` entries (then cleared).
static ORDER_CACHE: std::sync::Mutex<Option<OrderCache>> = std::sync::Mutex::new(None);
/// (order kind, topology hash) → permutation.
type OrderCache = std::collections::HashMap<(u8, u64), std::sync::Arc<Vec<usize>>>;
/// Entries kept in the order cache.
const ORDER_CACHE_MAX: usize = 1 << 20;

/// 64-bit hash of a graph's topology (node count and edge list).
fn topology_hash(g: &Graph) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    g.n_nodes().hash(&mut h);
    for e in g.edges() {
        (e.i, e.j).hash(&mut h);
    }
    h.finish()
}

impl Reordering {
    /// [`Reordering::order`], computed once per process for each graph topology. Any permutation
    /// gives the same kernel values, so even a hash collision could only cost speed; a cached
    /// entry of the wrong length is recomputed.
    pub fn order_cached(self, g: &Graph) -> std::sync::Arc<Vec<usize>> {
        if self == Reordering::Natural {
            return std::sync::Arc::new((0..g.n_nodes()).collect());
        }
        let key = (self as u8, topology_hash(g));
        if let Some(p) = ORDER_CACHE.lock().unwrap_or_else(|e| e.into_inner()).as_ref().and_then(|m| m.get(&key)).filter(|p| p.len() == g.n_nodes()) {
            return p.clone();
        }
        let p = std::sync::Arc::new(self.order(g));
        let mut cache = ORDER_CACHE.lock().unwrap_or_else(|e| e.into_inner());
        let m = cache.get_or_insert_with(Default::default);
        if m.len() >= ORDER_CACHE_MAX {
            m.clear();
        }
        m.insert(key, p.clone());
        p
    }
}

/// Number of non-empty 8×8 tiles of the adjacency matrix of `g` under `perm` (both triangles).
pub fn count_octiles(g: &Graph, perm: &[usize]) -> usize {
    let mut tiles: Vec<(usize, usize)> = Vec::with_capacity(2 * g.n_edges());
    for e in g.edges() {
        let (i, j) = (perm[e.i as usize] / 8, perm[e.j as usize] / 8);
        tiles.push((i, j));
        tiles.push((j, i));
    }
    tiles.sort_unstable();
    tiles.dedup();
    tiles.len()
}

/// Partition-based reordering: parts of 8 nodes become tile rows. Recursive balanced bisection
/// (Kernighan–Lin swaps at exact balance) gives a first partition; the best of it, the natural
/// and the RCM order is then refined by node swaps between parts that lower the number of
/// non-empty octiles directly (the objective, not a proxy of it). Never worse than natural or RCM.
pub fn pbr_order(g: &Graph) -> Vec<usize> {
    let rcm = rcm_order(g);
    let candidates = [bisection_order(g, &rcm), rcm, (0..g.n_nodes()).collect()];
    let best = candidates.into_iter().min_by_key(|p| count_octiles(g, p)).unwrap();
    refine_tiles(g, best)
}

/// METIS-based partition order (see [`Reordering::Metis`]); falls back to RCM where METIS cannot
/// partition (fewer than two parts, or a METIS error).
pub fn metis_order(g: &Graph) -> Vec<usize> {
    let n = g.n_nodes();
    let rcm = rcm_order(g);
    let parts = n.div_ceil(8);
    if parts < 2 {
        return rcm;
    }
    let adj = neighbours(g);
    let mut xadj: Vec<metis::Idx> = Vec::with_capacity(n + 1);
    let mut adjncy: Vec<metis::Idx> = Vec::new();
    xadj.push(0);
    for a in &adj {
        let mut a = a.clone();
        a.sort_unstable();
        a.dedup();
        adjncy.extend(a.iter().map(|&v| v as metis::Idx));
        xadj.push(adjncy.len() as metis::Idx);
    }
    let mut part = vec![0 as metis::Idx; n];
    let ok = metis::Graph::new(1, parts as metis::Idx, &xadj, &adjncy)
        .map(|gr| gr.set_option(metis::option::Seed(1)).set_option(metis::option::UFactor(1)).part_recursive(&mut part).is_ok())
        .unwrap_or(false);
    if !ok {
        return rcm;
    }
    // nodes by (part, RCM position): parts as METIS numbered them (neighbouring ids are close in
    // its bisection tree), then cut into consecutive tile rows of 8 (METIS parts are only ~8)
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&v| (part[v], rcm[v]));
    let mut perm = vec![0; n];
    for (new, &old) in order.iter().enumerate() {
        perm[old] = new;
    }
    refine_tiles(g, perm)
}

/// Symmetric counts of adjacency entries per pair of parts (tile rows): for P < Q the entries in
/// tile (P, Q) (= those in (Q, P)), for P = Q those in the diagonal tile. Dense up to
/// [`DENSE_PART_PAIRS_MAX_PARTS`] parts (a `parts²` array), a hash map above.
enum PairCounts {
    Dense { parts: usize, v: Vec<i32> },
    Sparse(std::collections::HashMap<(u32, u32), i32>),
}

/// Most parts (tile rows, n/8) for which [`PairCounts`] is a dense array (1024² × 4 B = 4 MiB;
/// PBR runs on many graphs in parallel).
const DENSE_PART_PAIRS_MAX_PARTS: usize = 1024;

impl PairCounts {
    fn new(parts: usize, dense_max_parts: usize) -> Self {
        if parts <= dense_max_parts { PairCounts::Dense { parts, v: vec![0; parts * parts] } } else { PairCounts::Sparse(Default::default()) }
    }
    #[inline]
    fn get(&self, p: usize, q: usize) -> i32 {
        let (p, q) = (p.min(q), p.max(q));
        match self {
            PairCounts::Dense { parts, v } => v[p * parts + q],
            PairCounts::Sparse(m) => *m.get(&(p as u32, q as u32)).unwrap_or(&0),
        }
    }
    #[inline]
    fn add(&mut self, p: usize, q: usize, d: i32) {
        let (p, q) = (p.min(q), p.max(q));
        match self {
            PairCounts::Dense { parts, v } => v[p * *parts + q] += d,
            PairCounts::Sparse(m) => {
                let e = m.entry((p as u32, q as u32)).or_default();
                *e += d;
                if *e == 0 {
                    m.remove(&(p as u32, q as u32));
                }
            }
        }
    }
}

/// Pending changes of the pair counts {pa, X} and {pb, X} for one candidate swap between parts pa
/// and pb: two dense arrays over X with touched lists (the pair {pa, pb} is kept in `da` only).
struct SwapDelta {
    da: Vec<i32>,
    db: Vec<i32>,
    /// Whether X is listed in `ta` / `tb`.
    seen_a: Vec<bool>,
    seen_b: Vec<bool>,
    ta: Vec<usize>,
    tb: Vec<usize>,
}

impl SwapDelta {
    fn new(parts: usize) -> Self {
        SwapDelta { da: vec![0; parts], db: vec![0; parts], seen_a: vec![false; parts], seen_b: vec![false; parts], ta: Vec::new(), tb: Vec::new() }
    }
    /// Add `d` to pair {p, x}, where p is pa or pb.
    #[inline]
    fn add(&mut self, pa: usize, p: usize, x: usize, d: i32) {
        let (arr, seen, touched, x) = if p == pa || x == pa {
            (&mut self.da, &mut self.seen_a, &mut self.ta, if p == pa { x } else { p })
        } else {
            (&mut self.db, &mut self.seen_b, &mut self.tb, x)
        };
        if !seen[x] {
            seen[x] = true;
            touched.push(x);
        }
        arr[x] += d;
    }
    /// Change of the number of non-empty octiles if the pending changes were applied to `s`
    /// (an off-diagonal pair is two octiles, a diagonal one is one).
    fn octile_change(&self, s: &PairCounts, pa: usize, pb: usize) -> i64 {
        let mut change = 0i64;
        for (p, arr, touched) in [(pa, &self.da, &self.ta), (pb, &self.db, &self.tb)] {
            for &x in touched {
                let d = arr[x];
                if d == 0 {
                    continue;
                }
                let old = s.get(p, x);
                let w = if p == x { 1 } else { 2 };
                change += w * (((old + d) > 0) as i64 - (old > 0) as i64);
            }
        }
        change
    }
    /// Apply the pending changes to `s` (when `commit`) and clear them.
    fn finish(&mut self, s: &mut PairCounts, pa: usize, pb: usize, commit: bool) {
        for (p, arr, seen, touched) in [(pa, &mut self.da, &mut self.seen_a, &mut self.ta), (pb, &mut self.db, &mut self.seen_b, &mut self.tb)] {
            for &x in touched.iter() {
                if commit && arr[x] != 0 {
                    s.add(p, x, arr[x]);
                }
                arr[x] = 0;
                seen[x] = false;
            }
            touched.clear();
        }
    }
}

/// Swap nodes between parts (tile rows) while that lowers the number of non-empty octiles.
///
/// ```text
/// S{P,Q}  adjacency entries between parts P and Q (PairCounts); octiles = Σ_{P<Q} 2·[S>0] + Σ_P [S{P,P}>0]
/// swap a ∈ pa ↔ b ∈ pb: for each neighbour u ∉ {a, b} of a (part pu):
///     S{pa,pu} −= 1 + [pu = pa]      S{pb,pu} += 1 + [pu = pb]      (and the same for b, pa ↔ pb);
///   a self-loop moves from S{pa,pa} to S{pb,pb}; the edge {a, b} stays in S{pa,pb}
/// ```
/// Only pairs {pa, ·} and {pb, ·} change, so a candidate swap costs O(deg a + deg b), with no
/// hashing for up to 1,024 parts (8,192 nodes).
fn refine_tiles(g: &Graph, perm: Vec<usize>) -> Vec<usize> {
    refine_tiles_with(g, perm, DENSE_PART_PAIRS_MAX_PARTS)
}

/// [`refine_tiles`] with dense pair counts up to `dense_max_parts` parts.
fn refine_tiles_with(g: &Graph, mut perm: Vec<usize>, dense_max_parts: usize) -> Vec<usize> {
    let n = g.n_nodes();
    let parts = n.div_ceil(8);
    let adj = neighbours(g);
    let mut self_loops = vec![0i32; n];
    for e in g.edges() {
        if e.i == e.j {
            self_loops[e.i as usize] += 1;
        }
    }
    let part = |perm: &[usize], v: usize| perm[v] / 8;
    let mut s = PairCounts::new(parts, dense_max_parts);
    for v in 0..n {
        for &u in &adj[v] {
            let (pv, pu) = (part(&perm, v), part(&perm, u));
            if pv <= pu {
                s.add(pv, pu, 1);
            }
        }
        if self_loops[v] > 0 {
            s.add(part(&perm, v), part(&perm, v), self_loops[v]);
        }
    }
    // members of each part, by position
    let mut at = vec![0usize; n];
    for v in 0..n {
        at[perm[v]] = v;
    }
    let mut delta = SwapDelta::new(parts);
    // pending changes of swapping a (part pa) with b (part pb)
    let stage = |delta: &mut SwapDelta, perm: &[usize], a: usize, b: usize, pa: usize, pb: usize| {
        for (v, from, to, other) in [(a, pa, pb, b), (b, pb, pa, a)] {
            for &u in &adj[v] {
                if u == other {
                    continue;
                }
                let pu = part(perm, u);
                delta.add(pa, from, pu, -(1 + (pu == from) as i32));
                delta.add(pa, to, pu, 1 + (pu == to) as i32);
            }
            if self_loops[v] > 0 {
                delta.add(pa, from, from, -self_loops[v]);
                delta.add(pa, to, to, self_loops[v]);
            }
        }
    };
    for _sweep in 0..4 {
        let mut improved = false;
        for a in 0..n {
            let pa = part(&perm, a);
            let mut cand: Vec<usize> = adj[a].iter().map(|&u| part(&perm, u)).filter(|&p| p != pa).collect();
            cand.sort_unstable();
            cand.dedup();
            let mut best: Option<(i64, usize)> = None;
            for &pb in &cand {
                for &b in &at[pb * 8..((pb + 1) * 8).min(n)] {
                    stage(&mut delta, &perm, a, b, pa, pb);
                    let change = delta.octile_change(&s, pa, pb);
                    delta.finish(&mut s, pa, pb, false);
                    if change < 0 && best.is_none_or(|(c, _)| change < c) {
                        best = Some((change, b));
                    }
                }
            }
            if let Some((_, b)) = best {
                let pb = part(&perm, b);
                stage(&mut delta, &perm, a, b, pa, pb);
                delta.finish(&mut s, pa, pb, true);
                perm.swap(a, b);
                at[perm[a]] = a;
                at[perm[b]] = b;
                improved = true;
            }
        }
        if !improved {
            break;
        }
    }
    perm
}

/// Recursive balanced bisection into parts of 8 (`perm[old] = new`), starting from the RCM order
/// `rcm`: bisection then only has to improve a locality-aware split.
fn bisection_order(g: &Graph, rcm: &[usize]) -> Vec<usize> {
    let n = g.n_nodes();
    let adj = neighbours(g);
    let mut order = Vec::with_capacity(n);
    let mut nodes = vec![0; n];
    for (old, &new) in rcm.iter().enumerate() {
        nodes[new] = old;
    }
    let mut side = vec![0u8; n];
    let mut stamp = vec![u32::MAX; n];
    let mut gain = vec![0i64; n];
    bisect(&adj, nodes, &mut order, &mut Scratch { side: &mut side, stamp: &mut stamp, gain: &mut gain }, &mut 0);
    let mut perm = vec![0; n];
    for (new, &old) in order.iter().enumerate() {
        perm[old] = new;
    }
    perm
}

/// Per-node scratch of [`bisect`], indexed by node id and shared by the whole recursion: the side
/// of the current split, the id of the split a node belongs to, and its swap gain.
struct Scratch<'a> {
    side: &'a mut [u8],
    stamp: &'a mut [u32],
    gain: &'a mut [i64],
}

/// Split `nodes` (in a locality-preserving order) into a left part of 8·⌊k/2⌋ nodes and a right
/// part (k = ⌈len/8⌉ tiles), improve the cut with exact-balance swaps, recurse.
///
/// Each pass swaps the unlocked node of largest gain on each side (ties: the larger node id) while
/// the pair's combined gain is positive. Gains are computed once per pass and then updated
/// incrementally (a swap changes only its two nodes' neighbours' gains, by ±2 per edge), with the
/// unlocked nodes of each side in an ordered set by (gain, node): O(deg + log n) per swap instead
/// of rescanning every node — the same swaps as the rescanning version (kept as the test oracle).
fn bisect(adj: &[Vec<usize>], nodes: Vec<usize>, order: &mut Vec<usize>, scratch: &mut Scratch, next: &mut u32) {
    use std::collections::BTreeSet;
    let Scratch { side, stamp, gain } = scratch;
    if nodes.len() <= 8 {
        order.extend(nodes);
        return;
    }
    let k = nodes.len().div_ceil(8);
    let left_len = 8 * (k / 2);
    *next += 1;
    let me = *next;
    for (p, &v) in nodes.iter().enumerate() {
        stamp[v] = me;
        side[v] = (p >= left_len) as u8;
    }
    // gain of moving v to the other side = (edges to the other side) − (edges to its own side)
    let gain_of = |v: usize, side: &[u8], stamp: &[u32]| -> i64 {
        let mut g = 0i64;
        for &u in &adj[v] {
            if stamp[u] == me {
                g += if side[u] != side[v] { 1 } else { -1 };
            }
        }
        g
    };
    for _pass in 0..8 {
        let mut improved = false;
        let mut sets: [BTreeSet<(i64, usize)>; 2] = [BTreeSet::new(), BTreeSet::new()];
        for &v in &nodes {
            let g = gain_of(v, side, stamp);
            gain[v] = g;
            sets[side[v] as usize].insert((g, v));
        }
        while let (Some(&(ga, a)), Some(&(gb, b))) = (sets[0].last(), sets[1].last()) {
            let w_ab = adj[a].iter().filter(|&&u| u == b).count() as i64;
            if ga + gb - 2 * w_ab <= 0 {
                break;
            }
            sets[0].remove(&(ga, a));
            sets[1].remove(&(gb, b));
            side[a] = 1;
            side[b] = 0;
            // an edge (u, v) with v moved: +2 to u's gain if u is on v's old side, −2 otherwise
            for (v, old_side) in [(a, 0u8), (b, 1u8)] {
                for &u in &adj[v] {
                    if stamp[u] != me || u == a || u == b {
                        continue;
                    }
                    let s = side[u] as usize;
                    let was_in = sets[s].remove(&(gain[u], u));
                    gain[u] += if side[u] == old_side { 2 } else { -2 };
                    if was_in {
                        sets[s].insert((gain[u], u));
                    }
                }
            }
            improved = true;
        }
        if !improved {
            break;
        }
    }
    let (left, right): (Vec<usize>, Vec<usize>) = nodes.iter().partition(|&&v| side[v] == 0);
    bisect(adj, left, order, scratch, next);
    bisect(adj, right, order, scratch, next);
}

#[cfg(test)]
mod refine_tests {
    use super::*;
    use crate::graph::Graph;

    /// The first implementation of [`refine_tiles`] (ordered-pair hash maps), kept as the test oracle.
    ///
    /// `links[(P, Q)]` counts edges between parts P and Q (both orders); the octile count is the
    /// number of nonzero entries. A swap of a ∈ A and b ∈ B moves each one's edges between rows.
    #[allow(clippy::needless_range_loop)]
    fn refine_tiles_hashmap(g: &Graph, mut perm: Vec<usize>) -> Vec<usize> {
        use std::collections::HashMap;
        let n = g.n_nodes();
        let adj = neighbours(g);
        let self_loop: Vec<bool> = {
            let mut s = vec![false; n];
            for e in g.edges() {
                if e.i == e.j {
                    s[e.i as usize] = true;
                }
            }
            s
        };
        let mut links: HashMap<(usize, usize), i64> = HashMap::new();
        let part = |perm: &[usize], v: usize| perm[v] / 8;
        for v in 0..n {
            for &u in &adj[v] {
                *links.entry((part(&perm, v), part(&perm, u))).or_default() += 1;
            }
            if self_loop[v] {
                *links.entry((part(&perm, v), part(&perm, v))).or_default() += 1;
            }
        }
        // members of each part, by position
        let mut at = vec![0usize; n];
        for v in 0..n {
            at[perm[v]] = v;
        }
        // change of the octile count if the entries in `delta` are added to `links`
        fn apply(links: &mut HashMap<(usize, usize), i64>, delta: &HashMap<(usize, usize), i64>, commit: bool) -> i64 {
            let mut change = 0;
            for (&k, &d) in delta {
                if d == 0 {
                    continue;
                }
                let old = *links.get(&k).unwrap_or(&0);
                let new = old + d;
                change += (new > 0) as i64 - (old > 0) as i64;
                if commit {
                    if new == 0 {
                        links.remove(&k);
                    } else {
                        links.insert(k, new);
                    }
                }
            }
            change
        }
        // links touched by the edges of a and b, counted under the part function `p`, times `sign`
        let contrib = |p: &dyn Fn(usize) -> usize, a: usize, b: usize, sign: i64, delta: &mut HashMap<(usize, usize), i64>| {
            for v in [a, b] {
                for &u in &adj[v] {
                    *delta.entry((p(v), p(u))).or_default() += sign;
                    if u != a && u != b {
                        *delta.entry((p(u), p(v))).or_default() += sign;
                    }
                }
                if self_loop[v] {
                    *delta.entry((p(v), p(v))).or_default() += sign;
                }
            }
        };
        for _sweep in 0..4 {
            let mut improved = false;
            for a in 0..n {
                let pa = part(&perm, a);
                let mut cand: Vec<usize> = adj[a].iter().map(|&u| part(&perm, u)).filter(|&p| p != pa).collect();
                cand.sort_unstable();
                cand.dedup();
                let mut best: Option<(i64, usize)> = None;
                for &pb in &cand {
                    for slot in pb * 8..((pb + 1) * 8).min(n) {
                        let b = at[slot];
                        let mut delta = HashMap::new();
                        contrib(&|v| part(&perm, v), a, b, -1, &mut delta);
                        contrib(
                            &|v| {
                                if v == a {
                                    pb
                                } else if v == b {
                                    pa
                                } else {
                                    part(&perm, v)
                                }
                            },
                            a,
                            b,
                            1,
                            &mut delta,
                        );
                        let change = apply(&mut links, &delta, false);
                        if change < 0 && best.is_none_or(|(c, _)| change < c) {
                            best = Some((change, b));
                        }
                    }
                }
                if let Some((_, b)) = best {
                    let mut delta = HashMap::new();
                    contrib(&|v| part(&perm, v), a, b, -1, &mut delta);
                    perm.swap(a, b);
                    at[perm[a]] = a;
                    at[perm[b]] = b;
                    contrib(&|v| part(&perm, v), a, b, 1, &mut delta);
                    apply(&mut links, &delta, true);
                    improved = true;
                }
            }
            if !improved {
                break;
            }
        }
        perm
    }

    /// The first implementation of [`bisect`] (every swap rescans all gains), kept as the test oracle.
    fn bisect_rescan(adj: &[Vec<usize>], nodes: Vec<usize>, order: &mut Vec<usize>, side: &mut [u8], stamp: &mut [u32], next: &mut u32) {
        if nodes.len() <= 8 {
            order.extend(nodes);
            return;
        }
        let k = nodes.len().div_ceil(8);
        let left_len = 8 * (k / 2);
        *next += 1;
        let me = *next;
        for (p, &v) in nodes.iter().enumerate() {
            stamp[v] = me;
            side[v] = (p >= left_len) as u8;
        }
        // gain of moving v to the other side = (edges to the other side) − (edges to its own side)
        let gain = |v: usize, side: &[u8], stamp: &[u32]| -> i64 {
            let mut g = 0i64;
            for &u in &adj[v] {
                if stamp[u] == me {
                    g += if side[u] != side[v] { 1 } else { -1 };
                }
            }
            g
        };
        for _pass in 0..8 {
            let mut improved = false;
            let mut locked = std::collections::HashSet::new();
            loop {
                let best = |s: u8, side: &[u8], locked: &std::collections::HashSet<usize>| {
                    nodes.iter().filter(|&&v| side[v] == s && !locked.contains(&v)).map(|&v| (gain(v, side, stamp), v)).max()
                };
                let (Some((ga, a)), Some((gb, b))) = (best(0, side, &locked), best(1, side, &locked)) else { break };
                let w_ab = adj[a].iter().filter(|&&u| u == b).count() as i64;
                let total = ga + gb - 2 * w_ab;
                if total <= 0 {
                    break;
                }
                side[a] = 1;
                side[b] = 0;
                locked.insert(a);
                locked.insert(b);
                improved = true;
            }
            if !improved {
                break;
            }
        }
        let (left, right): (Vec<usize>, Vec<usize>) = nodes.iter().partition(|&&v| side[v] == 0);
        bisect_rescan(adj, left, order, side, stamp, next);
        bisect_rescan(adj, right, order, side, stamp, next);
    }

    /// The incremental bisection makes exactly the splits of the rescanning one, on random graphs.
    #[test]
    fn bisection_equals_the_rescanning_oracle() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(12);
        for trial in 0..200 {
            let n = rng.gen_range(2..300);
            let m = rng.gen_range(0..4 * n);
            let mut g = Graph::new(n, &[], &[]);
            for _ in 0..m {
                g.add_edge(rng.gen_range(0..n), rng.gen_range(0..n), 1.0, &[]).unwrap();
            }
            let rcm = rcm_order(&g);
            let adj = neighbours(&g);
            let mut nodes = vec![0; n];
            for (old, &new) in rcm.iter().enumerate() {
                nodes[new] = old;
            }
            let (mut order, mut side, mut stamp, mut gain) = (Vec::new(), vec![0u8; n], vec![u32::MAX; n], vec![0i64; n]);
            bisect(&adj, nodes.clone(), &mut order, &mut Scratch { side: &mut side, stamp: &mut stamp, gain: &mut gain }, &mut 0);
            let (mut want, mut side, mut stamp) = (Vec::new(), vec![0u8; n], vec![u32::MAX; n]);
            bisect_rescan(&adj, nodes, &mut want, &mut side, &mut stamp, &mut 0);
            assert_eq!(order, want, "trial {trial}: n {n}, {m} edges");
        }
    }

    /// The array-based refinement makes exactly the swaps of the hash-map one (same candidates,
    /// same change per swap, same tie-breaking) on random graphs with self-loops and multi-edges.
    #[test]
    fn refinement_equals_the_hash_map_oracle() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        for trial in 0..200 {
            let n = rng.gen_range(2..200);
            let m = rng.gen_range(0..4 * n);
            let mut edges: Vec<(u32, u32)> = (0..m).map(|_| (rng.gen_range(0..n) as u32, rng.gen_range(0..n) as u32)).collect();
            if trial % 3 == 0 {
                edges.retain(|e| e.0 != e.1);
            }
            let mut g = Graph::new(n, &[], &[]);
            for &(i, j) in &edges {
                g.add_edge(i as usize, j as usize, 1.0, &[]).unwrap();
            }
            let start: Vec<usize> = if trial % 2 == 0 { (0..n).collect() } else { rcm_order(&g) };
            let old = refine_tiles_hashmap(&g, start.clone());
            // dense pair counts, and the hash-map pair counts of graphs above the dense limit
            assert_eq!(refine_tiles(&g, start.clone()), old, "trial {trial}: n {n}, {m} edges (dense counts)");
            assert_eq!(refine_tiles_with(&g, start, 0), old, "trial {trial}: n {n}, {m} edges (sparse counts)");
        }
    }
}
