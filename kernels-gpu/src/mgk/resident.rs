//! The resident MGK solver: a team (one warp, or one block) solves one pair with its two graphs
//! and all five CG vectors in shared memory (layout and why: `octile_types::mgk::resident`).
//!
//! Teams are persistent and draw pairs from a global counter, like the tile solver. Per pair:
//! stage both graphs, set up dg = D×V×⁻¹, b = D×·1, run the shared Jacobi-PCG (`octile_types::pcg`) in the
//! set's precision (f32, or f64 for `precision = "f64"`: [`ResidentReal`](real::ResidentReal)) with f64 reductions
//! until the recurrence residual reaches `RECURRENCE_SHARE`·rtol, then compute the true residual
//! b − M·x (products in that precision, f64 sums) and the value Σ pᵢ p′ᵢ′ xᵢᵢ′; if the true residual misses
//! rtol, restart CG from x with it (residual replacement, at most `MAX_REPLACEMENTS` times). The XMV
//!
//! ```text
//!   ap[(i,i')] = dg·p[(i,i')] − Σ_{j ∈ N(i)} Σ_{j' ∈ N'(i')} w_ij w'_i'j' κe(e_ij, e'_i'j') p[(j,j')]
//! ```
//! gives thread t the rows k = t, t + T, … (k = i·n′ + i′); the host sorts each graph's nodes
//! by degree, so the lanes of a warp walk rows of similar length. The product form's XMV takes
//! rows t, t + T, … of its own order instead, the rows grouped by the degrees of i and i′
//! ([`Xmv::walk`](xmv::Xmv::walk), `octile_types::mgk::resident::product_row_position`). Pairs whose slice exceeds
//! shared memory: [`grid`] (a team of blocks, the vectors in global memory).
//!
//! One concept a file; each imports what it uses from its siblings (`pub(super)` items; no file
//! imports this module, so `scripts/check-imports` sees no cycle), from the bottom up:
//!
//! ```text
//!   real.rs          ResidentReal: the solve's precision (f32, f64); ex2
//!   teams.rs         ResidentTeam: a warp or a block with its slice; warp_team, block_team
//!   edge.rs          EdgeEval: κe and both weights (the interpreter, one-term forms)
//!   view.rs          View: a graph staged in the slice
//!   xmv.rs           Xmv, FusedXmv: one product row's off-diagonal sum, as the solves see it
//!   on_the_fly.rs    OnTheFly: the XMV from both graphs' CSR
//!   product.rs       Product: the XMV from the product form's 16-bit entries
//!   operator.rs      ResidentOperator: M·p for the shared PCG; walks by (row, piece); recurrent
//!   solve.rs         solve_pair: PCG, true residual, residual replacement
//!   fused.rs         solve_pair_fused: primal and adjoint in one PCG (the gradient entries)
//!   jobs.rs          Jobs, deal, stage_pair, solve_all: a launch's jobs, drawn and staged; where vectors go
//!   product_jobs.rs  product_pairs: the product form's entry build and job loop
//!   gradient.rs      gradient_pair: the contractions of ∂K/∂θ; the gradient job loops
//!   entries.rs       the kernel entries, by macro per precision and κe form
//!   grid.rs          pairs past shared memory: teams of blocks, vectors in global memory
//! ```

pub mod grid;

/// Walks this thread's rows k = rank, rank + size, … < n1·n2 with their (i, i′).
macro_rules! rows {
    ($crew:expr, $n2:expr, $n:expr, |$k:ident, $i:ident, $i2:ident| $body:block) => {{
        // u32 counters (n1·n2 < 2³² for every resident pair): 32-bit loop arithmetic
        let (size, n2, n) = ($crew.size() as u32, $n2 as u32, $n as u32);
        let (step_i, step_i2) = (size / n2, size % n2);
        let mut k = $crew.rank() as u32;
        let mut i = k / n2;
        let mut i2 = k % n2;
        while k < n {
            #[allow(unused_variables)]
            let ($k, $i, $i2) = (k as usize, i as usize, i2 as usize);
            $body
            k += size;
            i += step_i;
            i2 += step_i2;
            if i2 >= n2 {
                i2 -= n2;
                i += 1;
            }
        }
    }};
}

mod edge;
mod entries;
mod fused;
mod gradient;
mod jobs;
mod on_the_fly;
mod operator;
mod product;
mod product_jobs;
mod real;
mod solve;
mod teams;
mod view;
mod xmv;
