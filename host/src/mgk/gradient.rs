//! Hyperparameter gradients of the marginalized graph kernel: the hyperparameters of a
//! configuration ([`MgkConfig::hyperparameters`]), the CPU's per-pair gradient (primal and adjoint
//! solve with the one PCG, then the contractions of `octile_types::mgk::gradient`), and the driver
//! [`MarginalizedGraphKernel::gram_gradient`] (K(X) or K(X, Y), normalized or not, with ∂K/∂θ).
use super::config::{BaseKernelConfig, FeatureKernel, MgkConfig};
use super::cpu::{CpuParams, MixedWorkspace, Rhs, Workspace, solve_pair, solve_pair_mixed, xmv_with};
use super::pack::PackedGraphs;
use crate::error::{OctileError, Result};
use crate::gram::kernel::{finish, finish_entries, listed_upper};
use crate::gram::tiles::{Tile, TilePairs};
use crate::graph::Graph;
use crate::matrix::{Gradient, Gram, PairInfo};
use octile_types::mgk::gradient::{combined, finish as finish_hyper, node_share};
use octile_types::mgk::layout::{NODE_D, NODE_FEATURES};
use octile_types::mgk::node_table::{NodeTable, TABLE_SLOTS};
use octile_types::mgk::tiling::{TILE_AREA, n_tiles, tiled_coords};
use octile_types::{Combine, GradientParams, Hyper, HyperKind, MAX_HYPERPARAMETERS, PairStatus, Real};
use rayon::prelude::*;

mod assembly;
use assembly::{Layout, info_of};
pub use assembly::{SelfFactor, normalized_entry};

impl MgkConfig {
    /// The hyperparameters θ of the kernel, in the order of a gradient's last axis (GraphDot's): `p`,
    /// `q`, then κv's terms and κe's terms, each as `node.<feature>.<h|length_scale|c>` and —
    /// in an additive combination — `node.<feature>.weight` (`edge.…` for κe). A feature with two
    /// terms names the second `node.<feature>#2.…`.
    pub fn hyperparameters(&self) -> Vec<String> {
        let mut names = vec!["p".to_string(), "q".to_string()];
        for (side, terms, combine) in [("node", &self.node, self.node_combine), ("edge", &self.edge, self.edge_combine)] {
            let mut seen: Vec<&str> = Vec::new();
            for t in terms.iter() {
                let dup = seen.iter().filter(|&&f| f == t.feature).count();
                seen.push(&t.feature);
                let stem = if dup == 0 { format!("{side}.{}", t.feature) } else { format!("{side}.{}#{}", t.feature, dup + 1) };
                names.push(format!("{stem}.{}", param_name(t)));
                if combine == Combine::Additive {
                    names.push(format!("{stem}.weight"));
                }
            }
        }
        names
    }

    /// The hyperparameters' current values, in [`hyperparameters`](Self::hyperparameters)' order.
    pub fn hyperparameter_values(&self) -> Vec<f64> {
        let mut v = vec![self.p, self.q];
        for (terms, combine) in [(&self.node, self.node_combine), (&self.edge, self.edge_combine)] {
            for t in terms.iter() {
                v.push(match t.kernel {
                    BaseKernelConfig::Constant { c } => c,
                    BaseKernelConfig::KroneckerDelta { h } => h,
                    BaseKernelConfig::SquareExponential { length_scale } => length_scale,
                });
                if combine == Combine::Additive {
                    v.push(t.weight);
                }
            }
        }
        v
    }

    /// Set the hyperparameters from `values` in [`hyperparameters`](Self::hyperparameters)' order
    /// (what `clone_with_theta` does), then validate the whole configuration; on an error `self` is
    /// unchanged.
    pub fn set_hyperparameters(&mut self, values: &[f64]) -> Result<()> {
        let names = self.hyperparameters();
        if values.len() != names.len() {
            return Err(OctileError::InvalidRequest(format!("{} hyperparameter values for the kernel's {} ({})", values.len(), names.len(), names.join(", "))));
        }
        let mut c = self.clone();
        let mut it = values.iter().copied();
        let mut next = || it.next().unwrap_or(f64::NAN);
        c.p = next();
        c.q = next();
        for (terms, combine) in [(&mut c.node, c.node_combine), (&mut c.edge, c.edge_combine)] {
            for t in terms.iter_mut() {
                let v = next();
                t.kernel = match t.kernel {
                    BaseKernelConfig::Constant { .. } => BaseKernelConfig::Constant { c: v },
                    BaseKernelConfig::KroneckerDelta { .. } => BaseKernelConfig::KroneckerDelta { h: v },
                    BaseKernelConfig::SquareExponential { .. } => BaseKernelConfig::SquareExponential { length_scale: v },
                };
                if combine == Combine::Additive {
                    t.weight = next();
                }
            }
        }
        c.validate()?;
        *self = c;
        Ok(())
    }

    /// The launch form of [`hyperparameters`](Self::hyperparameters).
    pub fn gradient_params(&self) -> GradientParams {
        let mut gp = GradientParams {
            n_hyper: 0,
            _pad: 0,
            q: self.q,
            p: self.p,
            hyper: [Hyper::new(HyperKind::StartingProbability, 0, 0.0); MAX_HYPERPARAMETERS],
            node_table: NodeTable::NONE,
        };
        let mut push = |h: Hyper| {
            gp.hyper[gp.n_hyper as usize] = h;
            gp.n_hyper += 1;
        };
        push(Hyper::new(HyperKind::StartingProbability, 0, 0.0));
        push(Hyper::new(HyperKind::StoppingProbability, 0, 0.0));
        for (terms, combine, param, weight) in [
            (&self.node, self.node_combine, HyperKind::NodeParam, HyperKind::NodeWeight),
            (&self.edge, self.edge_combine, HyperKind::EdgeParam, HyperKind::EdgeWeight),
        ] {
            let total: f64 = terms.iter().map(|t| t.weight).sum();
            for k in 0..terms.len() {
                push(Hyper::new(param, k as u32, 0.0));
                if combine == Combine::Additive {
                    push(Hyper::new(weight, k as u32, 1.0 / total));
                }
            }
        }
        gp
    }
}

fn param_name(t: &FeatureKernel) -> &'static str {
    match t.kernel {
        BaseKernelConfig::Constant { .. } => "c",
        BaseKernelConfig::KroneckerDelta { .. } => "h",
        BaseKernelConfig::SquareExponential { .. } => "length_scale",
    }
}

/// Per-thread vectors of the CPU gradient.
pub struct GradientWorkspace<T> {
    plain: Workspace<f64>,
    mixed: MixedWorkspace<T>,
    x: Vec<f64>,
    y: Vec<f64>,
    z: Vec<f64>,
}

impl<T> Default for GradientWorkspace<T> {
    fn default() -> Self {
        GradientWorkspace { plain: Workspace::default(), mixed: MixedWorkspace::default(), x: Vec::new(), y: Vec::new(), z: Vec::new() }
    }
}

/// K and ∂K/∂θ (into `out`, one per hyperparameter of `gp`) of the pair (g1, g2) on the CPU: the
/// primal and the adjoint solve — in f64 (T = f64), or mixed precision as [`solve_pair_mixed`] —
/// then the contractions in f64 on `set64`.
#[allow(clippy::too_many_arguments)]
pub fn gradient_pair<T: Real>(
    set: &PackedGraphs<T>,
    set64: &PackedGraphs<f64>,
    g1: usize,
    g2: usize,
    prm: &CpuParams,
    gp: &GradientParams,
    ws: &mut GradientWorkspace<T>,
    out: &mut [f64],
) -> PairStatus {
    let (primal, adjoint) = if T::BYTES == 8 {
        let p = solve_pair(set64, g1, g2, prm, &mut ws.plain, Rhs::Primal);
        ws.x.clear();
        ws.x.extend_from_slice(ws.plain.x());
        let a = solve_pair(set64, g1, g2, prm, &mut ws.plain, Rhs::Adjoint);
        ws.y.clear();
        ws.y.extend_from_slice(ws.plain.x());
        (p, a)
    } else {
        let p = solve_pair_mixed(set, set64, g1, g2, prm, &mut ws.mixed, Rhs::Primal);
        ws.x.clear();
        ws.x.extend_from_slice(ws.mixed.x64());
        let a = solve_pair_mixed(set, set64, g1, g2, prm, &mut ws.mixed, Rhs::Adjoint);
        ws.y.clear();
        ws.y.extend_from_slice(ws.mixed.x64());
        (p, a)
    };
    // the f64 tiles both solves expanded (the f64 path's own, the mixed path's residual's)
    let tiles = if T::BYTES == 8 { ws.plain.tiles() } else { ws.mixed.tiles64() };
    contract(set64, g1, g2, prm, gp, tiles, &ws.x, &ws.y, primal.value, &mut ws.z, out);
    combined(primal, adjoint)
}

/// ∂K/∂θ from the pair's primal x, adjoint y (tiled, f64) and value k.
#[allow(clippy::too_many_arguments)]
fn contract(
    set64: &PackedGraphs<f64>,
    g1: usize,
    g2: usize,
    prm: &CpuParams,
    gp: &GradientParams,
    tiles: [&[f64]; 2],
    x: &[f64],
    y: &[f64],
    k: f64,
    z: &mut Vec<f64>,
    out: &mut [f64],
) {
    let (n, m) = (set64.n_nodes(g1), set64.n_nodes(g2));
    let mt = n_tiles(m);
    let len = n_tiles(n) * mt * TILE_AREA;
    let mut plain = prm.dense;
    plain.usable = 0;
    // q and κv's hyperparameters in one pass where κv has a table (`GradientParams::with_node_table`):
    // one mask and one coefficient per entry and hyperparameter
    let table = &gp.node_table;
    let mut tabled = [0.0f64; TABLE_SLOTS];
    if table.used != 0 {
        let slots = gp.hypers().iter().filter(|h| h.is_node_side()).count().min(TABLE_SLOTS);
        for idx in 0..len {
            let (i, ip) = tiled_coords(idx, mt);
            if i < n && ip < m {
                let (a1, a2) = (set64.node_row(g1, i), set64.node_row(g2, ip));
                let coef = &table.coef[table.mask(&a1[NODE_FEATURES..], &a2[NODE_FEATURES..])];
                let w = y[idx] * x[idx] * (a1[NODE_D] * a2[NODE_D]);
                for (t, c) in tabled.iter_mut().zip(&coef[..slots]) {
                    *t += w * c;
                }
            }
        }
    }
    let mut slot = 0;
    for (h, o) in gp.hypers().iter().zip(out.iter_mut()) {
        let shares = if h.is_edge() {
            z.clear();
            z.resize(len, 0.0);
            let d = h.derivative(prm.edge);
            // z = −(A×⊙∂E×)·x
            xmv_with(set64, g1, g2, prm, &d, &plain, tiles, x, None, z);
            -y.iter().zip(z.iter()).take(len).map(|(a, b)| a * b).sum::<f64>()
        } else if !h.is_node_side() {
            0.0 // p: ∂K/∂p = 2K/p, no sum
        } else if table.used != 0 {
            // a table holds at most TABLE_SLOTS node-side hyperparameters (with_node_table)
            slot += 1;
            tabled[slot - 1]
        } else {
            let mut s = 0.0;
            for idx in 0..len {
                let (i, ip) = tiled_coords(idx, mt);
                if i < n && ip < m {
                    let (a1, a2) = (set64.node_row(g1, i), set64.node_row(g2, ip));
                    s += node_share(h, gp, prm.node, &a1[NODE_FEATURES..], &a2[NODE_FEATURES..], a1[NODE_D] * a2[NODE_D], x[idx], y[idx]);
                }
            }
            s
        };
        *o = finish_hyper(h, gp, k, shares);
    }
}

impl super::MarginalizedGraphKernel {
    /// K(X) (`y` = None) or K(X, Y), normalized or not, with ∂K/∂θ for every hyperparameter θ of
    /// [`MgkConfig::hyperparameters`] in [`Gram::gradient`] (rows × cols × P; the normalized form
    /// by the quotient rule through the diagonal's gradient). Each pair takes one extra (adjoint)
    /// solve, on the kernel's backend and precision. A pair that does not converge is
    /// [`OctileError::NoConvergence`] carrying the whole result, gradient included.
    pub fn gram_gradient(&self, x: &[Graph], y: Option<&[Graph]>, normalized: bool) -> Result<Gram> {
        self.gram_gradient_columns(x, y, normalized, None)
    }

    /// [`gram_gradient`](Self::gram_gradient) with its gradient's columns chosen and scaled as it
    /// is assembled: column c of [`Gram::gradient`] is `f`·∂K/∂θ_h for `columns[c] = (h, f)` (θ_h
    /// the h-th of [`MgkConfig::hyperparameters`]; e.g. f = θ_h gives ∂K/∂log θ_h, scikit-learn's).
    /// The same values as choosing and scaling the columns of the whole gradient afterwards,
    /// without a second pass over it.
    /// `None`: every column, unscaled. A column index past the hyperparameters is
    /// [`OctileError::InvalidRequest`].
    pub fn gram_gradient_columns(&self, x: &[Graph], y: Option<&[Graph]>, normalized: bool, columns: Option<&[(usize, f64)]>) -> Result<Gram> {
        let all: Vec<Graph>;
        let graphs: &[Graph] = match y {
            None => x,
            Some(y) => {
                all = x.iter().chain(y).cloned().collect();
                &all
            }
        };
        let lay = Layout::of(x.len(), y.map(<[Graph]>::len), normalized);
        let names = self.config.hyperparameters();
        let np = names.len();
        if let Some(&(h, _)) = columns.and_then(|c| c.iter().find(|&&(h, _)| h >= np)) {
            return Err(OctileError::InvalidRequest(format!("hyperparameter column {h} of a gradient with {np}")));
        }
        // the assembled gradient's columns: (hyperparameter, factor)
        let every: Vec<(usize, f64)> = (0..np).map(|h| (h, 1.0)).collect();
        let picked = columns.unwrap_or(&every);
        self.check_gradient_memory(lay.rows * lay.cols, lay.pairs.len(), np, || format!("a {} × {} Gram matrix", lay.rows, lay.cols))?;
        let t = std::time::Instant::now();
        // the output matrices allocated, their pages mapped, beside the solve
        let buffers = assembly::Buffers::ahead(lay.rows * lay.cols, picked.len());
        let (status, grads, seconds, details) = self.solve_gradient(graphs, &lay.pairs)?;
        if self.control.cancelled() {
            return Err(OctileError::Cancelled);
        }
        log::debug!("gradient: {} pairs solved in {:.1} ms", lay.pairs.len(), t.elapsed().as_secs_f64() * 1e3);
        let buffers = buffers.join().unwrap_or_else(|_| assembly::Buffers::new(lay.rows * lay.cols, picked.len()));
        log::debug!("gradient: output buffers ready at {:.1} ms", t.elapsed().as_secs_f64() * 1e3);
        let out = assembly::assemble(&lay, &status, &grads, np, picked, normalized, buffers);
        // the inputs go: freeing them is no part of the answer
        let bytes = std::mem::size_of_val(&status[..]) + std::mem::size_of_val(&grads[..]) + std::mem::size_of_val(&lay.pairs[..]);
        crate::parallel::drop_aside((status, grads, lay.pairs), bytes);
        let g = Gram {
            rows: lay.rows,
            cols: lay.cols,
            values: out.values,
            info: out.info,
            pairs_solved: out.pairs,
            backend: self.engine.name().into(),
            device: self.engine.describe(),
            seconds,
            details,
            gradient: Some(Gradient { names: picked.iter().map(|&(h, _)| names[h].clone()).collect(), values: out.gradient }),
        };
        log::debug!("gradient: matrix assembled at {:.1} ms", t.elapsed().as_secs_f64() * 1e3);
        // the entries were checked as they were written: a failure is looked up only if one exists
        if out.converged { Ok(g) } else { finish_entries(g) }
    }

    /// K[tile] of K(X) (`y` None) or K(X, Y), un-normalized, with ∂K/∂θ in [`Gram::gradient`]:
    /// the same values as those entries of [`gram_gradient`](Self::gram_gradient) (the tile's pairs
    /// as [`crate::gram::gram_tile`] lists them). Cancelled: [`OctileError::Cancelled`].
    pub fn gram_gradient_tile(&self, x: &[Graph], y: Option<&[Graph]>, tile: &Tile) -> Result<Gram> {
        let tp = TilePairs::of(x, y, tile)?;
        let names = self.config.hyperparameters();
        let np = names.len();
        let (nr, nc) = (tp.rows, tp.cols);
        self.check_gradient_memory(nr * nc, tp.pairs.len(), np, || format!("a {nr} × {nc} tile"))?;
        let (status, grads, seconds, details) = self.solve_gradient(&tp.graphs, &tp.pairs)?;
        if self.control.cancelled() {
            return Err(OctileError::Cancelled);
        }
        let info: Vec<PairInfo> = status.iter().map(info_of).collect();
        let values: Vec<f64> = status.iter().map(|s| s.value).collect();
        let g = Gram {
            rows: nr,
            cols: nc,
            values: tp.gather(values, 1),
            info: tp.gather(info, 1),
            pairs_solved: tp.pairs.len(),
            backend: self.engine.name().into(),
            device: self.engine.describe(),
            seconds,
            details,
            gradient: Some(Gradient { names, values: tp.gather(grads, np) }),
        };
        finish_entries(g)
    }

    /// The memory of a gradient result of `entries` entries from `pairs` pairs (value, P derivatives
    /// and diagnostics each), against `--max-memory` and what is available; `what`: the result.
    fn check_gradient_memory(&self, entries: usize, pairs: usize, np: usize, what: impl FnOnce() -> String) -> Result<()> {
        crate::memory::check(
            (entries as u128 + pairs as u128) * (8 * (np as u128 + 1) + std::mem::size_of::<PairInfo>() as u128)
                + pairs as u128 * crate::gram::GraphKernel::working_bytes_per_pair(self) as u128,
            self.control.max_memory_bytes,
            || format!("{} with its gradient ({np} hyperparameters)", what()),
        )
    }

    /// ∂K/∂θ of the listed pairs of `graphs` (as [`crate::GraphKernel::pairs`]): a
    /// `pairs.len()` × 1 result whose [`Gram::gradient`] holds each pair's derivatives.
    pub fn pairs_gradient(&self, graphs: &[Graph], pairs: &[(usize, usize)]) -> Result<Gram> {
        let list = listed_upper(graphs, pairs)?;
        let names = self.config.hyperparameters();
        let (status, grads, seconds, details) = self.solve_gradient(graphs, &list)?;
        if self.control.cancelled() {
            return Err(OctileError::Cancelled);
        }
        let info: Vec<PairInfo> = status.iter().map(info_of).collect();
        let g = Gram {
            rows: pairs.len(),
            cols: 1,
            values: status.iter().map(|s| s.value).collect(),
            info: info.clone(),
            pairs_solved: pairs.len(),
            backend: self.engine.name().into(),
            device: self.engine.describe(),
            seconds,
            details,
            gradient: Some(Gradient { names, values: grads }),
        };
        finish(g, &info, |k| pairs[k])
    }
}

/// One row of the gradient result being assembled: its index, values, derivatives and infos.
/// Statuses and gradients in pair order, and the GPU entries that ran (GPU only).
type GradientPairs = (Vec<PairStatus>, Vec<f64>, Option<Vec<super::report::GpuEntry>>);

/// What a gradient run returns: statuses and gradients (pair-major, θ fastest) in pair order, the
/// seconds taken, the run's report.
type GradientRun = (Vec<PairStatus>, Vec<f64>, f64, crate::report::Details);

impl super::MarginalizedGraphKernel {
    /// K and ∂K/∂θ of `pairs` of `graphs` on the kernel's engine: on the GPU in f32, the resident
    /// solver's gradient entries first (as for K), the tile solver's for the pairs they leave.
    fn solve_gradient(&self, graphs: &[Graph], pairs: &[(u32, u32)]) -> Result<GradientRun> {
        let gpus = self.gpus();
        let t = std::time::Instant::now();
        let (mut status, grads, seconds, details) = if super::spread::spreads(gpus.len(), pairs.len()) {
            let np = self.config.gradient_params().n_hyper as usize;
            let (status, grads, report, seconds) = super::spread::spread(&gpus, pairs, np, |dev, share| {
                let (status, per_pair, report) = self.on_device(dev).solve_gradient_here(graphs, share)?;
                Ok(super::spread::Part { status, per_pair, report })
            })?;
            (status, grads, seconds, crate::report::Details::new(report))
        } else {
            let (status, grads, report) = self.solve_gradient_here(graphs, pairs)?;
            (status, grads, t.elapsed().as_secs_f64(), crate::report::Details::new(report))
        };
        // a value out of range is a failure (as for K: `mark_out_of_range`)
        self.mark_out_of_range(&mut status);
        Ok((status, grads, seconds, details))
    }

    /// [`solve_gradient`](Self::solve_gradient) on the kernel's engine alone.
    fn solve_gradient_here(&self, graphs: &[Graph], pairs: &[(u32, u32)]) -> Result<(Vec<PairStatus>, Vec<f64>, super::report::MgkReport)> {
        let gp = self.config.gradient_params();
        let np = gp.n_hyper as usize;
        let rtol = self.config.solver.rtol_for(self.config.precision);
        if let Some(dev) = self.resident_device(true) {
            let opt = super::pack::PackOptions::new(&self.resolved, self.config.q, self.config.p);
            let t = std::time::Instant::now();
            let (node, edge) = (&self.resolved.node_spec, &self.resolved.edge_spec);
            let (max_it, opts) = (self.config.solver.max_iterations, &self.config.gpu.resident);
            let res = super::gpu::resident::solve_resident(
                dev,
                self.config.precision,
                graphs,
                &opt,
                pairs,
                node,
                edge,
                rtol,
                max_it,
                opts,
                self.config.gpu.scratch_bytes,
                &self.control,
                Some(&gp),
            )?;
            let (mut status, rest, mut grads) = (res.status, res.rest, res.grads);
            log::debug!("gradient: resident solver done at {:.1} ms, {} pair(s) left to the tile solver", t.elapsed().as_secs_f64() * 1e3, rest.len());
            let mut report = super::report::MgkReport { resident: Some(res.report), tiles: None };
            if !rest.is_empty() {
                let sub: Vec<(u32, u32)> = rest.iter().map(|&k| pairs[k]).collect();
                let (st, g, tiles) = self.gradient_tiles(graphs, &sub, &gp)?;
                for (i, &k) in rest.iter().enumerate() {
                    status[k] = st[i];
                    grads[k * np..(k + 1) * np].copy_from_slice(&g[i * np..(i + 1) * np]);
                }
                report.tiles = Some(tiles);
                log::debug!("gradient: tile solver done at {:.1} ms", t.elapsed().as_secs_f64() * 1e3);
            }
            return Ok((status, grads, report));
        }
        let (status, grads, tiles) = self.gradient_tiles(graphs, pairs, &gp)?;
        Ok((status, grads, super::report::MgkReport { resident: None, tiles: Some(tiles) }))
    }

    /// K and ∂K/∂θ of `pairs` with the tile solvers (CPU or GPU).
    fn gradient_tiles(&self, graphs: &[Graph], pairs: &[(u32, u32)], gp: &GradientParams) -> Result<(Vec<PairStatus>, Vec<f64>, super::report::TileReport)> {
        let super::Packed { set64, set32, map, .. } = self.pack_sets(graphs)?;
        let (status, grads, entries) = match (&self.engine, &set32) {
            (crate::gpu::Engine::Cpu, None) => self.gradient_cpu(&set64, &set64, pairs, &map.map, gp)?,
            (crate::gpu::Engine::Cpu, Some(s32)) => self.gradient_cpu(s32, &set64, pairs, &map.map, gp)?,
            (crate::gpu::Engine::Cuda(dev), _) => {
                let (scratch, ctl, bpp) = (self.config.gpu.scratch_bytes, &self.control, self.config.tiles.blocks_per_pair);
                let (status, grads, entries) = match &set32 {
                    None => super::gpu::gradient::solve_pairs(dev, &set64, &set64, pairs, &self.tile_params(&set64, &map.map), gp, bpp, scratch, ctl)?,
                    Some(s32) => super::gpu::gradient::solve_pairs(dev, s32, &set64, pairs, &self.tile_params(s32, &map.map), gp, bpp, scratch, ctl)?,
                };
                (status, grads, Some(entries))
            }
        };
        Ok((status, grads, super::report::TileReport { pairs: pairs.len(), primitives: map.origin, dense_walks: self.dense_walks(), gpu_entries: entries }))
    }

    /// [`Self::solve_gradient`] on the CPU: pairs in parallel, one [`GradientWorkspace`] per thread.
    fn gradient_cpu<T: Real>(
        &self,
        set: &PackedGraphs<T>,
        set64: &PackedGraphs<f64>,
        pairs: &[(u32, u32)],
        primitives: &octile_types::PrimitiveMap,
        gp: &GradientParams,
    ) -> Result<GradientPairs> {
        let prm = self.cpu_params(primitives, pairs.len());
        // κv's table for the contractions, where κv allows one
        let gp = &gp.with_node_table(prm.node);
        // the solver's workspace plus x, y, z and the f64 tiles
        self.check_cpu_workspace(set, pairs, |s, a, b| 2 * super::cpu::workspace_bytes(s, a, b, &prm))?;
        let np = gp.n_hyper as usize;
        let block_len = 256 * rayon::current_num_threads().max(1);
        let solved: Vec<(PairStatus, Vec<f64>)> = self.control.stream(crate::gram::control::blocks_of(pairs.len(), block_len), |range| {
            Ok(pairs[range]
                .par_iter()
                .map_init(GradientWorkspace::<T>::default, |ws, &(a, b)| {
                    let mut g = vec![0.0; np];
                    let st = gradient_pair(set, set64, a as usize, b as usize, &prm, gp, ws, &mut g);
                    (st, g)
                })
                .collect())
        })?;
        let mut grads = Vec::with_capacity(pairs.len() * np);
        let mut status = Vec::with_capacity(pairs.len());
        for (s, g) in solved {
            status.push(s);
            if g.len() == np { grads.extend_from_slice(&g) } else { grads.extend(std::iter::repeat_n(f64::NAN, np)) }
        }
        Ok((status, grads, None))
    }
}

/// A tile of [`MarginalizedGraphKernel::gram_gradient_tile`] normalized in place with the
/// self-values and gradients of its rows' graphs (`rows`: K_ii, then ∂K_ii/∂θ row-major, P each)
/// and of its columns' (`cols`): the same values as those entries of the normalized
/// [`gram_gradient`](super::MarginalizedGraphKernel::gram_gradient) (`symmetric`: a tile of K(X)).
pub fn normalize_gradient_tile(g: &mut Gram, tile: &Tile, rows: (&[f64], &[f64]), cols: (&[f64], &[f64]), symmetric: bool) {
    let Some(grad) = g.gradient.as_mut() else { return };
    let np = grad.names.len();
    let nc = g.cols;
    let factors =
        |(k, d): (&[f64], &[f64])| -> Vec<Option<SelfFactor>> { k.iter().enumerate().map(|(i, &k)| SelfFactor::of(k, &d[i * np..(i + 1) * np])).collect() };
    let (fr, fc) = (factors(rows), factors(cols));
    let every: Vec<(usize, f64)> = (0..np).map(|h| (h, 1.0)).collect();
    for (e, v) in g.values.iter_mut().enumerate() {
        let (a, b) = (e / nc.max(1), e % nc.max(1));
        // ∂K of the entry, read before the normalized gradient overwrites it (P ≤ MAX_HYPERPARAMETERS)
        let mut dk = [0.0; MAX_HYPERPARAMETERS];
        dk[..np].copy_from_slice(&grad.values[e * np..(e + 1) * np]);
        let on_diagonal = symmetric && tile.rows.start + a == tile.cols.start + b;
        *v = normalized_entry(*v, &dk[..np], fr[a].as_ref(), fc[b].as_ref(), on_diagonal, &every, &mut grad.values[e * np..(e + 1) * np]);
    }
}
