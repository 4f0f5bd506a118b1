//! Hydrogens, the same from every molecule format (RDKit's defaults): an explicit hydrogen atom —
//! `[H]` in SMILES, an `H` atom in a molfile — bonded to exactly one other, non-hydrogen atom,
//! uncharged and without an isotope, is folded into its neighbour's `hcount` (RDKit's `RemoveHs`);
//! other hydrogens (`[H+]`, `[2H]`, H₂, a bridging H) stay atoms. Molfile atoms get implicit
//! hydrogens from default valences as RDKit computes them, so a molecule read from SMILES and from
//! an SDF without explicit hydrogens gives the same graph.

/// An atom as the readers see it before folding.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Atom {
    /// Atomic number.
    pub z: u32,
    /// Formal charge.
    pub charge: i32,
    /// An isotope is given (`[2H]`, `M  ISO`).
    pub isotope: bool,
}

/// Per atom: whether it is a hydrogen folded into its neighbour (see the module text); `bonds` are
/// index pairs.
pub fn foldable(atoms: &[Atom], bonds: &[(usize, usize)]) -> Vec<bool> {
    let mut degree = vec![0u32; atoms.len()];
    let mut heavy_neighbour = vec![false; atoms.len()];
    for &(a, b) in bonds {
        degree[a] += 1;
        degree[b] += 1;
        heavy_neighbour[a] |= atoms[b].z != 1;
        heavy_neighbour[b] |= atoms[a].z != 1;
    }
    atoms.iter().enumerate().map(|(k, a)| a.z == 1 && a.charge == 0 && !a.isotope && degree[k] == 1 && heavy_neighbour[k]).collect()
}

/// The default valences RDKit allows an element (the first, for implicit hydrogens), by atomic
/// number; `None` for elements that get no implicit hydrogens.
fn valences(z: u32) -> Option<&'static [u32]> {
    Some(match z {
        1 => &[1],
        5 => &[3],
        6 => &[4],
        7 => &[3],
        8 => &[2],
        9 => &[1],
        14 => &[4],
        15 => &[3, 5, 7],
        16 => &[2, 4, 6],
        17 => &[1],
        33 => &[3, 5, 7],
        34 => &[2, 4, 6],
        35 => &[1],
        52 => &[2, 4, 6],
        53 => &[1, 3, 5],
        _ => return None,
    })
}

/// Implicit hydrogens of a molfile atom: the smallest default valence of its element — or, when
/// charged, of the isoelectronic element (N⁺ like C, O⁻ like F, C⁻ like N, B⁻ like C) — at least
/// its explicit valence (bond orders, aromatic 1.5, rounded as RDKit does), minus that valence.
pub fn implicit_h(z: u32, charge: i32, explicit_valence: f64) -> u32 {
    let like = z as i64 - charge as i64;
    // isoelectronic shifts only within the first rows RDKit treats so
    let z_eff = if charge != 0 && (5..=9).contains(&z) && (5..=9).contains(&like) { like as u32 } else { z };
    if charge != 0 && z_eff == z && z != 1 {
        return 0;
    }
    let Some(list) = valences(z_eff) else { return 0 };
    let v = (explicit_valence + 0.1).floor() as u32;
    list.iter().find(|&&allowed| allowed >= v).map_or(0, |&allowed| allowed - v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn implicit_hydrogens_follow_default_valences() {
        // (z, charge, explicit valence) → implicit H
        for (z, c, v, h) in [
            (6, 0, 0.0, 4),
            (6, 0, 3.0, 1),
            (6, 0, 4.5, 0),
            (7, 0, 1.0, 2),
            (7, 1, 0.0, 4),
            (7, 1, 4.0, 0),
            (8, -1, 1.0, 0),
            (8, 0, 1.0, 1),
            (8, 1, 2.0, 1),
            (16, 0, 2.0, 0),
            (16, 0, 3.0, 1),
            (15, 0, 5.0, 0),
            (6, -1, 0.0, 3),
            (5, -1, 0.0, 4),
            (26, 0, 0.0, 0),
            (6, 0, 1.5 + 1.5, 1),
            (17, 0, 1.0, 0),
            (11, 1, 0.0, 0),
        ] {
            assert_eq!(implicit_h(z, c, v), h, "z {z}, charge {c}, explicit valence {v}");
        }
    }

    #[test]
    fn only_plain_terminal_hydrogens_on_heavy_atoms_fold() {
        let a = |z, charge, isotope| Atom { z, charge, isotope };
        // C–H, H–H, [H+], [2H]–C, a bridging H between two B
        let atoms =
            [a(6, 0, false), a(1, 0, false), a(1, 0, false), a(1, 0, false), a(1, 1, false), a(1, 0, true), a(5, 0, false), a(1, 0, false), a(5, 0, false)];
        let bonds = [(0, 1), (2, 3), (5, 0), (6, 7), (7, 8)];
        assert_eq!(foldable(&atoms, &bonds), [false, true, false, false, false, false, false, false, false]);
    }
}
