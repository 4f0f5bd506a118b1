//! The fast graphlet transform on all CPU cores: FGlT's two passes over the rows, each node by one
//! rayon task with a dense per-thread workspace (FGlT's `fl` / `isNgbh` arrays), the row sums and
//! their raw and net frequencies from `octile_types::graphlets`, the same functions the GPU uses.
//!
//! Pass 1 counts the 2-walks i → k → j (j ≠ i) into `walks[j]`; each increment adds the count it
//! found, so c4 = Σ_j C(w_ij, 2) needs no list of the j touched. Pass 2 counts the 4-cliques at
//! i as the triangles among N(i), so every node's row is its own (no atomics, no merge).
use super::adjacency::Adjacency;
use super::frequencies::{Frequencies, overflow};
use crate::error::{OctileError, Result};
use octile_types::graphlets::{N_ORBITS, Pass1Sums, Pass2Sums, finish_pass1, finish_pass2, raw_to_net, t04};
use rayon::prelude::*;
use std::sync::{Mutex, MutexGuard};

/// Nodes per rayon task.
const CHUNK: usize = 1024;

/// One thread's pass-2 workspace: two n-entry marks (pass 1's is n 2-walk counters).
struct Marks {
    mark: Vec<u32>,
    mark2: Vec<u32>,
}

/// This worker thread's workspace of `spaces` (one per thread of the pool).
fn own<T>(spaces: &[Mutex<T>]) -> Result<MutexGuard<'_, T>> {
    let t = rayon::current_thread_index().unwrap_or(0) % spaces.len();
    spaces[t].lock().map_err(|_| OctileError::InvalidGraph { graph: None, what: "a graphlet workspace was poisoned by an earlier panic".into() })
}

/// Bytes of one thread's workspace for `n` nodes (the larger pass's, with room to spare).
pub fn workspace_bytes(n: usize) -> u128 {
    n as u128 * 12
}

/// Raw and net frequencies of every node.
pub fn transform(a: &Adjacency) -> Result<Frequencies> {
    let n = a.n_nodes();
    let threads = rayon::current_num_threads() as u128;
    crate::memory::check_with(
        workspace_bytes(n) * threads + (n as u128) * 2 * 128 + a.col().len() as u128 * 4,
        None,
        || format!("the graphlet transform of {n} nodes on the CPU ({threads} threads' workspaces)"),
        "use fewer threads (RAYON_NUM_THREADS) or the GPU backend",
    )?;
    let mut raw = vec![[0i64; N_ORBITS]; n];
    let mut c3 = vec![0u32; a.col().len()];
    // pass 1: every chunk of nodes writes its own rows of raw and its own runs of c3
    let starts = a.row_start();
    let mut c3_chunks: Vec<&mut [u32]> = Vec::with_capacity(n.div_ceil(CHUNK));
    let mut rest: &mut [u32] = &mut c3;
    for c in 0..n.div_ceil(CHUNK) {
        let (lo, hi) = (starts[c * CHUNK], starts[((c + 1) * CHUNK).min(n)]);
        let (head, tail) = std::mem::take(&mut rest).split_at_mut((hi - lo) as usize);
        c3_chunks.push(head);
        rest = tail;
    }
    // one workspace per worker thread for the whole call, all zero between nodes (rayon's `*_init`
    // would build one per job split: hundreds of n-word arrays, each zeroed and faulted in)
    let walk_spaces: Vec<Mutex<Vec<u32>>> = (0..threads as usize).map(|_| Mutex::new(vec![0u32; n])).collect();
    raw.par_chunks_mut(CHUNK).zip(c3_chunks.into_par_iter()).enumerate().try_for_each(|(c, (rows, c3_run))| -> Result<()> {
        let mut walks = own(&walk_spaces)?;
        let walks = &mut *walks;
        let base = starts[c * CHUNK];
        for (t, row) in rows.iter_mut().enumerate() {
            let i = c * CHUNK + t;
            let off = (starts[i] - base) as usize;
            let s = pass1(a, i, walks, &mut c3_run[off..off + a.degree(i) as usize]).ok_or_else(|| overflow(i))?;
            *row = finish_pass1(&s).ok_or_else(|| overflow(i))?;
        }
        Ok(())
    })?;
    // pass 2: the neighbours' d̂2 and d̂4 and the c3 of every edge are final
    let mut net = vec![[0i64; N_ORBITS]; n];
    let d2_d4: Vec<[i64; 2]> = raw.par_iter().map(|r| [r[2], r[4]]).collect();
    drop(walk_spaces);
    let mark_spaces: Vec<Mutex<Marks>> = (0..threads as usize).map(|_| Mutex::new(Marks { mark: vec![0; n], mark2: vec![0; n] })).collect();
    raw.par_chunks_mut(CHUNK).zip(net.par_chunks_mut(CHUNK)).enumerate().try_for_each(|(c, (rows, nets))| -> Result<()> {
        let mut w = own(&mark_spaces)?;
        let w = &mut *w;
        for (t, (row, net_row)) in rows.iter_mut().zip(nets.iter_mut()).enumerate() {
            let i = c * CHUNK + t;
            let s = pass2(a, i, &d2_d4, &c3, w).ok_or_else(|| overflow(i))?;
            finish_pass2(row, &s).ok_or_else(|| overflow(i))?;
            *net_row = raw_to_net(row).ok_or_else(|| overflow(i))?;
        }
        Ok(())
    })?;
    Ok(Frequencies::from_rows(raw, net))
}

/// Pass 1 of node i: its row sums, and w_ij into `c3_row` (node i's run of c3). `walks` is all
/// zero on entry and on return. `None`: a sum passes `i64`.
fn pass1(a: &Adjacency, i: usize, walks: &mut [u32], c3_row: &mut [u32]) -> Option<Pass1Sums> {
    let row = a.row(i);
    let mut s = Pass1Sums { d: row.len() as i64, ..Pass1Sums::default() };
    for &k in row {
        let dk = a.degree(k as usize) as i64;
        s.s_deg = s.s_deg.checked_add(dk)?;
        s.s_t04 = s.s_t04.checked_add(t04(dk)?)?;
        for &j in a.row(k as usize) {
            if j as usize != i {
                let w = &mut walks[j as usize];
                s.c4 = s.c4.checked_add(*w as i64)?;
                *w += 1;
            }
        }
    }
    for (slot, &j) in c3_row.iter_mut().zip(row) {
        let w = walks[j as usize] as i64;
        *slot = w as u32;
        s.tri2 = s.tri2.checked_add(w)?;
        s.s10 = s.s10.checked_add(w.checked_mul(a.degree(j as usize) as i64 - 2)?)?;
        s.s14 = s.s14.checked_add(w.checked_mul(w)?)?;
    }
    for &k in row {
        for &j in a.row(k as usize) {
            walks[j as usize] = 0;
        }
    }
    Some(s)
}

/// Pass 2 of node i from every node's pass-1 d̂2 and d̂4 and c3. `None`: a sum passes `i64`.
fn pass2(a: &Adjacency, i: usize, d2_d4: &[[i64; 2]], c3: &[u32], w: &mut Marks) -> Option<Pass2Sums> {
    let starts = a.row_start();
    let row = a.row(i);
    let tag = i as u32 + 1;
    for &k in row {
        w.mark[k as usize] = tag;
    }
    let mut s = Pass2Sums::default();
    for (pk, &k) in row.iter().enumerate() {
        let k = k as usize;
        s.s5 = s.s5.checked_add(d2_d4[k][0])?;
        s.s9 = s.s9.checked_add(d2_d4[k][1])?;
        let c_ik = c3[starts[i] as usize + pk];
        if c_ik == 0 {
            continue;
        }
        // s13: triangles {i, j, k} with j < k, each once, weighted by c3(j, k) − 1
        let base_k = starts[k] as usize;
        for (pj, &j) in a.row(k).iter().enumerate() {
            if j as usize >= k {
                break;
            }
            let c_kj = c3[base_k + pj];
            if c_kj != 0 && w.mark[j as usize] == tag {
                s.s13 = s.s13.checked_add(c_kj as i64 - 1)?;
            }
        }
        // 4-cliques {i, k, l, m} with k < l < m: l and m common to i and k, and adjacent
        if c_ik < 2 {
            continue;
        }
        let tag2 = k as u32 + 1;
        for &l in a.row(k) {
            w.mark2[l as usize] = tag2;
        }
        for (pl, &l) in a.row(k).iter().enumerate() {
            if (l as usize) <= k || w.mark[l as usize] != tag || c3[base_k + pl] < 2 {
                continue;
            }
            for &m in a.row(l as usize) {
                if m > l && w.mark[m as usize] == tag && w.mark2[m as usize] == tag2 {
                    s.k4 += 1;
                }
            }
        }
    }
    Some(s)
}
