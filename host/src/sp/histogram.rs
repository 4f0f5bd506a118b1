//! The histogram form of the shortest-path kernel (Kronecker deltas of h = 0 everywhere, GraKeL's
//! case): each graph becomes the counts of its (label u, label v, length) triples, and K(G, G′) is
//! the dot product of two count vectors — exact integers. Triples get global ids (first seen,
//! first numbered) so each graph's histogram is a sorted run of (id, count):
//!
//! ```text
//! Histograms { runs: [SpHistogram { offset, len }; graphs], ids: [u32], counts: [u32] }
//!   graph g: ids[offset .. offset + len] ascending, counts alongside
//! ```
use super::paths::PathSet;
use octile_types::sp::SpHistogram;
use rayon::prelude::*;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Every graph's histogram.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Histograms {
    /// One run per graph.
    pub runs: Vec<SpHistogram>,
    /// Triple ids, ascending within a run.
    pub ids: Vec<u32>,
    /// Their counts.
    pub counts: Vec<u32>,
}

/// A fast multiplicative hash for the small integer keys here (labels, triples); not for
/// untrusted keys' worst cases, which only cost time.
#[derive(Default)]
struct Fx(u64);

impl Hasher for Fx {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }
    fn write_u32(&mut self, v: u32) {
        self.write_u64(v as u64);
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_usize(&mut self, v: usize) {
        self.write_u64(v as u64);
    }
}

type FxMap<K, V> = HashMap<K, V, BuildHasherDefault<Fx>>;

/// (label id of u, label id of v, length bits).
type Triple = (u32, u32, u64);

impl Histograms {
    /// The histograms of a path set.
    pub fn build(set: &PathSet) -> Histograms {
        // every node's label (the bits of its feature row, −0 as 0) as a small id: one lookup per
        // node, not per path
        let bits: Vec<u64> = set.nodes.iter().map(|&v| if v == 0.0 { 0 } else { v.to_bits() }).collect();
        let mut label_id: FxMap<&[u64], u32> = FxMap::default();
        let node_label: Vec<u32> = bits
            .chunks(set.node_stride)
            .map(|row| {
                let next = label_id.len() as u32;
                *label_id.entry(row).or_insert(next)
            })
            .collect();
        // per graph: its sorted (label u, label v, length bits) triples with counts
        let per: Vec<Vec<(Triple, u32)>> = (0..set.graphs.len())
            .into_par_iter()
            .map(|g| {
                let base = set.graphs[g].node_offset as usize;
                let mut t: Vec<(u32, u32, u64)> = set.paths(g).map(|p| (node_label[base + set.sp_s[p] as usize], node_label[base + set.sp_e[p] as usize], set.sp_w[p].to_bits())).collect();
                t.sort_unstable();
                let mut out: Vec<(Triple, u32)> = Vec::new();
                for x in t {
                    match out.last_mut() {
                        Some((y, c)) if *y == x => *c += 1,
                        _ => out.push((x, 1)),
                    }
                }
                out
            })
            .collect();
        let mut id_of: FxMap<Triple, u32> = FxMap::default();
        let mut h = Histograms::default();
        for run in per {
            let mut r: Vec<(u32, u32)> = run
                .into_iter()
                .map(|(t, c)| {
                    let next = id_of.len() as u32;
                    (*id_of.entry(t).or_insert(next), c)
                })
                .collect();
            r.sort_unstable();
            h.runs.push(SpHistogram { offset: h.ids.len() as u32, len: r.len() as u32 });
            h.ids.extend(r.iter().map(|x| x.0));
            h.counts.extend(r.iter().map(|x| x.1));
        }
        h
    }

    /// Σ count_a(t)·count_b(t) over the triples t both graphs have (a merge of sorted runs).
    pub fn dot(&self, a: usize, b: usize) -> f64 {
        let (ra, rb) = (self.runs[a], self.runs[b]);
        let (ia, ib) = (&self.ids[ra.offset as usize..(ra.offset + ra.len) as usize], &self.ids[rb.offset as usize..(rb.offset + rb.len) as usize]);
        let (ca, cb) = (&self.counts[ra.offset as usize..], &self.counts[rb.offset as usize..]);
        let (mut x, mut y, mut acc) = (0usize, 0usize, 0u64);
        while x < ia.len() && y < ib.len() {
            match ia[x].cmp(&ib[y]) {
                std::cmp::Ordering::Less => x += 1,
                std::cmp::Ordering::Greater => y += 1,
                std::cmp::Ordering::Equal => {
                    acc += ca[x] as u64 * cb[y] as u64;
                    x += 1;
                    y += 1;
                }
            }
        }
        acc as f64
    }
}
