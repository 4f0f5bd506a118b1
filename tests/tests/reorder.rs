//! Reorderings are permutations, PBR never makes more octiles than the natural or RCM order, and
//! packing in any order gives the same kernel values (see also properties.rs).
use octile::generators::{ba_set, nws_set};
use octile::reorder::{Reordering, count_octiles};
use octile_tests::{random_graph, random_shape};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

#[test]
fn reorderings_are_permutations_and_pbr_is_best() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let mut graphs = nws_set(5, 1);
    graphs.extend(ba_set(5, 2));
    for _ in 0..40 {
        let n = rng.gen_range(1..120);
        let s = random_shape(&mut rng, n);
        graphs.push(random_graph(&mut rng, s));
    }
    for (k, g) in graphs.iter().enumerate() {
        let mut counts = Vec::new();
        for r in [Reordering::Natural, Reordering::Rcm, Reordering::Pbr] {
            let p = r.order(g);
            let mut seen = p.clone();
            seen.sort_unstable();
            assert!(seen.iter().enumerate().all(|(i, &v)| i == v), "graph {k} {r:?}: not a permutation");
            counts.push(count_octiles(g, &p));
        }
        assert!(counts[2] <= counts[0] && counts[2] <= counts[1], "graph {k}: octiles natural {}, RCM {}, PBR {}", counts[0], counts[1], counts[2]);
    }
}
