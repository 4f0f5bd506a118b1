//! Seeded molecule-like graphs, for benchmarks past the size of the real sets (the scale
//! benchmark's 20,000-graph set tops NCI and ChEMBL up with them): the SMILES reader's features
//! (`element` as the atomic number, `aromatic`, `charge`, `hcount`; bond `order` 1, 2, 3 or 4 for
//! aromatic) on drug-sized skeletons.
//!
//! A skeleton grows atom by atom, each bonded to a random earlier atom with a free valence (a
//! tree, as chains and branches), with rings closed as it grows: about one in six atoms closes a
//! 5- or 6-membered ring back along the path to an earlier atom, and half of the 6-rings are
//! aromatic. Elements follow drug-like frequencies (C 72 %, N 12 %, O 12 %, S 2 %, F/Cl 2 %), with
//! valences respected; charges ±1 on 2 % of N and O.
use crate::graph::Graph;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// `count` molecule-like graphs of 6–60 heavy atoms (median ~25), seeded.
pub fn molecule_set(count: usize, seed: u64) -> Vec<Graph> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x6d6f_6c65_6375_6c65);
    (0..count).map(|_| molecule(&mut rng)).collect()
}

fn valence(z: u32) -> usize {
    match z {
        6 => 4,
        7 => 3,
        8 | 16 => 2,
        _ => 1,
    }
}

/// One molecule-like graph.
pub fn molecule(rng: &mut impl Rng) -> Graph {
    // heavy atoms: a skewed draw around 25
    let n = (6.0 + 19.0 * (-(rng.r#gen::<f64>().max(1e-9)).ln()).min(2.8)).round() as usize;
    let mut z: Vec<u32> = Vec::with_capacity(n);
    let mut parent: Vec<usize> = Vec::with_capacity(n);
    let mut bonds: Vec<(usize, usize, f64)> = Vec::new();
    let mut used: Vec<usize> = Vec::with_capacity(n);
    let mut aromatic = vec![false; n];
    let pick_element = |rng: &mut dyn rand::RngCore, terminal_ok: bool| -> u32 {
        let r = rng.gen_range(0.0..1.0);
        match r {
            r if r < 0.72 => 6,
            r if r < 0.84 => 7,
            r if r < 0.96 => 8,
            r if r < 0.98 => 16,
            _ if terminal_ok => {
                if rng.gen_bool(0.5) {
                    9
                } else {
                    17
                }
            }
            _ => 6,
        }
    };
    for i in 0..n {
        let zi = if i == 0 { 6 } else { pick_element(rng, true) };
        z.push(zi);
        used.push(0);
        parent.push(usize::MAX);
        if i == 0 {
            continue;
        }
        // bond to a random earlier atom with a free valence (prefer recent ones: chains)
        let candidates: Vec<usize> = (0..i).filter(|&j| used[j] < valence(z[j])).collect();
        let Some(&j) = (if candidates.is_empty() { None } else { Some(&candidates[candidates.len() - 1 - rng.gen_range(0..candidates.len().min(4))]) }) else {
            z[i] = 6;
            continue;
        };
        let order = if valence(z[i]) >= 2 && used[j] + 2 <= valence(z[j]) && rng.gen_bool(0.1) { 2.0 } else { 1.0 };
        bonds.push((j, i, order));
        used[j] += order as usize;
        used[i] += order as usize;
        parent[i] = j;
        // close a ring back along the path to an earlier atom
        if i >= 5 && rng.gen_bool(1.0 / 6.0) {
            let size = if rng.gen_bool(0.6) { 6 } else { 5 };
            let mut path = vec![i];
            while path.len() < size && parent[*path.last().unwrap_or(&0)] != usize::MAX {
                path.push(parent[*path.last().unwrap_or(&0)]);
            }
            let a = *path.last().unwrap_or(&i);
            if path.len() == size && used[i] < valence(z[i]) && used[a] < valence(z[a]) && !bonds.iter().any(|&(u, v, _)| (u, v) == (a.min(i), a.max(i))) {
                bonds.push((a.min(i), a.max(i), 1.0));
                used[i] += 1;
                used[a] += 1;
                if size == 6 && rng.gen_bool(0.5) && path.iter().all(|&p| z[p] == 6 || z[p] == 7) {
                    for &p in &path {
                        aromatic[p] = true;
                    }
                }
            }
        }
    }
    let mut g = Graph::new(n, &["element", "aromatic", "charge", "hcount"], &["order"]);
    for i in 0..n {
        let charge = if (z[i] == 7 || z[i] == 8) && rng.gen_bool(0.02) { if z[i] == 7 { 1.0 } else { -1.0 } } else { 0.0 };
        let h = valence(z[i]).saturating_sub(used[i]) as f64;
        // a set_node_features error cannot happen: 4 features for 4 names
        let _ = g.set_node_features(i, &[z[i] as f64, aromatic[i] as u8 as f64, charge, h]);
    }
    for &(a, b, order) in &bonds {
        let o = if aromatic[a] && aromatic[b] { 4.0 } else { order };
        let _ = g.add_edge(a, b, 1.0, &[o]);
    }
    g
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn molecules_are_seeded_connected_and_drug_sized() {
        let a = molecule_set(300, 1);
        assert_eq!(a, molecule_set(300, 1), "seeded");
        assert_ne!(a, molecule_set(300, 2));
        let sizes: Vec<usize> = a.iter().map(Graph::n_nodes).collect();
        assert!(sizes.iter().all(|&n| (6..=60).contains(&n)), "{sizes:?}");
        let mean = sizes.iter().sum::<usize>() as f64 / sizes.len() as f64;
        assert!((18.0..32.0).contains(&mean), "mean {mean}");
        for g in &a {
            g.validate().unwrap();
            // a tree plus ring closures: at least n − 1 bonds
            assert!(g.n_edges() + 1 >= g.n_nodes(), "{} nodes, {} edges", g.n_nodes(), g.n_edges());
        }
        assert!(a.iter().any(|g| (0..g.n_nodes()).any(|i| g.node_features(i)[1] == 1.0)), "some aromatic rings");
    }
}
