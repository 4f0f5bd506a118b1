//! `octile gram`'s computation, tile by tile, streamed to disk: each finished tile (K(X): and its
//! transpose) is written into the output `.npy` in place, so memory holds the graphs and one tile
//! whatever the matrix's size; an interruption keeps every finished tile for `--resume`.
//!
//! ```text
//! region R × C of the matrix (all of it, or --rows/--cols)  →  tiles (octile::gram::TilePlan)
//! tile K[r, c] ──(normalize with the diagonals)──► NAME.partial.npy at (r − R₀, c − C₀)
//!                                                  and, K(X) where R ∩ C holds r and c, (c, r)ᵀ
//! finished: NAME.partial.npy → NAME.npy (or → NAME.csv, row by row)
//! ```
use octile::checksum::{Fnv64, values_checksum};
use octile::gram::tiles::overlap;
use octile::gram::{Tile, TilePlan, block_tiles, gram_tile, normalize_tile};
use octile::io::npy::NpyWriter;
use octile::mgk::gradient::normalize_gradient_tile;
use octile::report::Details;
use octile::{Gram, Graph, GraphKernel, MarginalizedGraphKernel, OctileError, PairInfo};
use std::ops::Range;

/// The kernel a run computes with: any method's, or the marginalized kernel with ∂K/∂θ.
#[derive(Clone, Copy)]
pub enum Compute<'a> {
    Values(&'a (dyn GraphKernel + Sync)),
    Gradient(&'a MarginalizedGraphKernel),
}

/// What to compute: the region `rows` × `cols` of K(X) (`y` None) or K(X, Y), normalized or not.
pub struct Job<'a> {
    pub x: &'a [Graph],
    pub y: Option<&'a [Graph]>,
    pub rows: Range<usize>,
    pub cols: Range<usize>,
    pub normalized: bool,
    pub tile_size: usize,
}

impl Job<'_> {
    /// Whether `tile` is written with its transpose: a tile of K(X) off the diagonal whose
    /// transpose lies in the region too (every such tile of a square region; those of a block's
    /// part across the diagonal, `octile::gram::block_tiles`).
    pub fn mirrors(&self, tile: &Tile) -> bool {
        self.y.is_none() && tile.mirrored_in(&self.rows, &self.cols)
    }

    fn cols_set(&self) -> &[Graph] {
        self.y.unwrap_or(self.x)
    }

    /// The tiles of the region, in index order (global indices): K(X)'s hold each unordered pair
    /// of the region once, whatever the tile size (`octile::gram::block_tiles`).
    pub fn tiles(&self) -> octile::Result<Vec<Tile>> {
        let nodes = |s: &[Graph]| s.iter().map(Graph::n_nodes).collect::<Vec<_>>();
        let Some(y) = self.y else {
            return block_tiles(&nodes(self.x), self.rows.clone(), self.cols.clone(), self.tile_size);
        };
        let plan = TilePlan::new(&nodes(&self.x[self.rows.clone()]), Some(&nodes(&y[self.cols.clone()])), self.tile_size);
        let (r0, c0) = (self.rows.start, self.cols.start);
        Ok(plan.tiles().into_iter().map(|t| Tile { rows: t.rows.start + r0..t.rows.end + r0, cols: t.cols.start + c0..t.cols.end + c0 }).collect())
    }

    /// Distinct pairs of a tile (K(X): one per unordered pair), for progress totals: the tile's
    /// `pairs_solved`.
    pub fn pairs_of(&self, t: &Tile) -> usize {
        t.pairs(self.y.is_none())
    }

    /// The graphs whose K(G, G) a normalized job divides by (none if it is not normalized): the
    /// rows' and the columns', those on both sides of K(X) once ([`diagonals`]).
    pub fn diagonal_pairs(&self) -> usize {
        match (self.normalized, self.shared_diagonal()) {
            (false, _) => 0,
            (true, Some(both)) => both.len(),
            (true, None) => self.rows.len() + self.cols.len(),
        }
    }

    /// K(X) whose rows and columns share graphs: the graphs of both, one range (then their
    /// diagonal is computed once for both sides).
    fn shared_diagonal(&self) -> Option<Range<usize>> {
        (self.y.is_none() && !overlap(&self.rows, &self.cols).is_empty()).then(|| self.rows.start.min(self.cols.start)..self.rows.end.max(self.cols.end))
    }

    /// Shape of the output.
    pub fn shape(&self) -> (usize, usize) {
        (self.rows.len(), self.cols.len())
    }
}

/// The diagonals a normalized job divides by: K_ii of the rows' graphs and of the columns' (and,
/// with the gradient, ∂K_ii/∂θ, P per graph).
pub struct Diagonals {
    rows: (Vec<f64>, Vec<f64>),
    cols: (Vec<f64>, Vec<f64>),
}

/// What the run has seen so far, over every tile.
#[derive(Default)]
pub struct Tally {
    /// Pairs evaluated.
    pub pairs: usize,
    /// iterations[k]: entries solved in k iterations.
    pub iterations: Vec<u64>,
    /// Entries of the output that did not converge (global row, column, info; K(X): both (i, j)
    /// and (j, i)).
    pub failures: Vec<(usize, usize, PairInfo)>,
    /// Distinct pairs that did not converge.
    pub failed_pairs: usize,
    /// The first tile's report.
    pub details: Option<Details>,
}

impl Tally {
    /// Add `tile`'s result `g` of `job`.
    pub fn add(&mut self, g: &Gram, tile: &Tile, job: &Job) {
        self.pairs += g.pairs_solved;
        let (symmetric, mirrors) = (job.y.is_none(), job.mirrors(tile));
        // row by row (no division per entry: a MUTAG-size tile's 35 k entries took 0.27 ms so)
        for (a, row) in g.info.chunks(g.cols.max(1)).enumerate() {
            let i = tile.rows.start + a;
            for (b, f) in row.iter().enumerate() {
                let j = tile.cols.start + b;
                if !f.converged {
                    self.failures.push((i, j, *f));
                    if mirrors {
                        self.failures.push((j, i, *f));
                    }
                }
                // K(X): an entry below the diagonal whose mirror is in the tile is counted by it
                if symmetric && i > j && tile.rows.contains(&j) && tile.cols.contains(&i) {
                    continue;
                }
                self.failed_pairs += usize::from(!f.converged);
                let it = f.iterations as usize;
                if self.iterations.len() <= it {
                    self.iterations.resize(it + 1, 0);
                }
                self.iterations[it] += 1;
            }
        }
        if self.details.is_none() {
            self.details = Some(g.details.clone());
        }
    }

    /// Add what another tally saw (a tile's, made by the thread that computed it: the writer
    /// then merges a histogram instead of walking every entry of the tile).
    pub fn merge(&mut self, other: Tally) {
        self.pairs += other.pairs;
        if self.iterations.len() < other.iterations.len() {
            self.iterations.resize(other.iterations.len(), 0);
        }
        for (a, b) in self.iterations.iter_mut().zip(&other.iterations) {
            *a += b;
        }
        self.failures.extend(other.failures);
        self.failed_pairs += other.failed_pairs;
        if self.details.is_none() {
            self.details = other.details;
        }
    }

    /// (min, median, max) iterations over the entries counted.
    pub fn iteration_stats(&self) -> (u32, u32, u32) {
        let total: u64 = self.iterations.iter().sum();
        if total == 0 {
            return (0, 0, 0);
        }
        let lo = self.iterations.iter().position(|&c| c > 0).unwrap_or(0);
        let hi = self.iterations.iter().rposition(|&c| c > 0).unwrap_or(0);
        let (mut seen, mut med) = (0, 0);
        for (k, &c) in self.iterations.iter().enumerate() {
            seen += c;
            if seen > total / 2 {
                med = k;
                break;
            }
        }
        (lo as u32, med as u32, hi as u32)
    }
}

/// The diagonals of a normalized job (K(G, G) of the rows' and columns' graphs, with gradients;
/// K(X) whose rows and columns share graphs: of both at once, each graph once); a diagonal pair
/// that does not converge is listed in `tally` and its value used as it is.
pub fn diagonals(job: &Job, compute: &Compute, tally: &mut Tally) -> octile::Result<Diagonals> {
    let mut one = |set: &[Graph], first: usize| -> octile::Result<(Vec<f64>, Vec<f64>)> {
        let pairs: Vec<(usize, usize)> = (0..set.len()).map(|i| (i, i)).collect();
        let r = match compute {
            Compute::Values(k) => k.pairs(set, &pairs),
            Compute::Gradient(k) => k.pairs_gradient(set, &pairs),
        };
        let g = match r {
            Ok(g) => g,
            Err(OctileError::NoConvergence { partial, .. }) => *partial,
            Err(e) => return Err(e),
        };
        tally.pairs += g.pairs_solved;
        for (k, f) in g.info.iter().enumerate() {
            if !f.converged {
                tally.failures.push((first + k, first + k, *f));
                tally.failed_pairs += 1;
            }
        }
        Ok((g.values, g.gradient.map(|d| d.values).unwrap_or_default()))
    };
    if let Some(both) = job.shared_diagonal() {
        let d = one(&job.x[both.clone()], both.start)?;
        let (rows, cols) = (job.rows.start - both.start..job.rows.end - both.start, job.cols.start - both.start..job.cols.end - both.start);
        return Ok(Diagonals { rows: diagonal_part(&d, rows), cols: diagonal_part(&d, cols) });
    }
    let rows = one(&job.x[job.rows.clone()], job.rows.start)?;
    let cols = one(&job.cols_set()[job.cols.clone()], job.cols.start)?;
    Ok(Diagonals { rows, cols })
}

/// Graphs `part` of diagonals `d` (K(G, G) per graph, and ∂K/∂θ's P per graph, if any).
fn diagonal_part(d: &(Vec<f64>, Vec<f64>), part: Range<usize>) -> (Vec<f64>, Vec<f64>) {
    let np = d.1.len() / d.0.len().max(1);
    (d.0[part.clone()].to_vec(), d.1[part.start * np..part.end * np].to_vec())
}

/// The files a job fills: the matrix and, with the gradient, ∂K/∂θ (P per entry).
pub struct Outputs {
    pub values: NpyWriter,
    pub gradient: Option<(NpyWriter, usize)>,
}

/// When a tile was computed and written, in seconds since the run's start (the summary's
/// `timeline`: a GPU idle while another finishes its last tile, a writer behind the GPUs).
#[derive(Clone, Debug, Default)]
pub struct TileTimes {
    /// Which of `compute_on_devices`'s threads computed it (thread k computes on device k mod the
    /// devices' count).
    pub worker: usize,
    /// Seconds since the run's start when its thread took it.
    pub start: f64,
    /// … when its values were computed (normalized, if the job is).
    pub computed: f64,
    /// … when the writer took it (later than `computed` while the writer is behind).
    pub handed: f64,
    /// … when its values (and ∂K/∂θ) were in the output files.
    pub written: f64,
    /// The solvers' phase marks while it was computed (`octile::phases`), in seconds since the
    /// run's start.
    pub phases: Vec<(&'static str, f64)>,
}

/// Every tile of `todo`, computed by one thread per entry of `computes` (the kernel once per GPU,
/// or the one kernel, each as many times as the tiles it keeps in flight), each taking the next
/// tile when it finishes one and sending it to the writer (`tx`) with its times and its tally
/// since `t0`. With several threads the largest tiles go first, so that the last ones are small;
/// with one, in `todo`'s order. The first error stops the others after their current tile; a
/// writer that stopped stops them too (its error comes back from its join).
///
/// `pools` (one per entry of `computes`, or none): each thread's tiles do their host work
/// (pairing, packing, planning, statuses) on its own pool ([`slot_pools`]) rather than all on the
/// global one.
pub fn compute_on_devices<'t>(
    job: &Job,
    computes: &[Compute],
    pools: &[rayon::ThreadPool],
    diag: Option<&Diagonals>,
    todo: &[&'t Tile],
    t0: std::time::Instant,
    tx: &std::sync::mpsc::SyncSender<(&'t Tile, Gram, TileTimes, Tally)>,
) -> octile::Result<()> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let mut order: Vec<&'t Tile> = todo.to_vec();
    if computes.len() > 1 {
        order.sort_by_key(|t| std::cmp::Reverse(job.pairs_of(t)));
    }
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        let workers: Vec<_> = computes
            .iter()
            .enumerate()
            .map(|(worker, compute)| {
                let (order, next, tx) = (&order, &next, tx.clone());
                s.spawn(move || -> octile::Result<()> {
                    let pool = pools.get(worker);
                    loop {
                        let k = next.fetch_add(1, Ordering::Relaxed);
                        let Some(&tile) = order.get(k) else { return Ok(()) };
                        let start = t0.elapsed().as_secs_f64();
                        let run = || octile::phases::recorded(|| compute_tile(job, compute, diag, tile));
                        let (g, marks) = match pool {
                            Some(p) => p.install(run),
                            None => run(),
                        };
                        let g = g.inspect_err(|_| next.store(order.len(), Ordering::Relaxed))?;
                        let phases = marks.into_iter().map(|(what, at)| (what, at.duration_since(t0).as_secs_f64())).collect();
                        let times = TileTimes { worker, start, computed: t0.elapsed().as_secs_f64(), phases, ..TileTimes::default() };
                        // the tile's tally here, beside the GPU's next tile, not on the writer's thread
                        let mut part = Tally::default();
                        part.add(&g, tile, job);
                        if tx.send((tile, g, times, part)).is_err() {
                            next.store(order.len(), Ordering::Relaxed);
                            return Ok(());
                        }
                    }
                })
            })
            .collect();
        // every thread joined first, then the first error
        let results: Vec<octile::Result<()>> =
            workers.into_iter().map(|w| w.join().unwrap_or_else(|_| Err(OctileError::InvalidConfig("a GPU's tile thread panicked".into())))).collect();
        results.into_iter().collect()
    })
}

/// `threads` thread pools of `size` threads each (none when `size` is 0), one per tile thread of
/// [`compute_on_devices`]: eight GPU tiles in flight (two GPUs × four) put their many small
/// parallel jobs on the one global pool, queued behind each other's (NCI 5K's tiles took 10–90 ms
/// to plan 420 k pairs that one thread plans in ~5 ms; `results/scale/scale-h200x2-run27.md`). A
/// pool serves its one thread's tiles only, so a thread waiting on its GPU holds nothing another
/// tile needs.
pub fn slot_pools(threads: usize, size: usize) -> octile::Result<Vec<rayon::ThreadPool>> {
    if size == 0 {
        return Ok(Vec::new());
    }
    (0..threads)
        .map(|k| {
            rayon::ThreadPoolBuilder::new().num_threads(size).thread_name(move |i| format!("octile-tile{k}-{i}")).build().map_err(|e| {
                OctileError::Internal(format!(
                    "starting tile thread {k}'s pool of {size} threads: {e} (OCTILE_SLOT_THREADS=0 puts every tile on the global pool)"
                ))
            })
        })
        .collect()
}

/// Compute `tile` (normalized with `diag` when the job is): its entries (local), with the gradient
/// when the job has one. A tile whose pairs did not all converge is returned too (its failures in
/// its info), to be written and listed.
pub fn compute_tile(job: &Job, compute: &Compute, diag: Option<&Diagonals>, tile: &Tile) -> octile::Result<Gram> {
    let r = match compute {
        Compute::Values(k) => gram_tile(*k, job.x, job.y, tile),
        Compute::Gradient(k) => k.gram_gradient_tile(job.x, job.y, tile),
    };
    let mut g = match r {
        Ok(g) => g,
        Err(OctileError::NoConvergence { partial, .. }) => *partial,
        Err(e) => return Err(e),
    };
    if let Some(d) = diag {
        let (ra, ca) = (tile.rows.start - job.rows.start, tile.cols.start - job.cols.start);
        let symmetric = job.y.is_none();
        let np = g.gradient.as_ref().map_or(0, |d| d.len());
        let rows = (&d.rows.0[ra..ra + tile.rows.len()], d.rows.1.get(ra * np..(ra + tile.rows.len()) * np).unwrap_or(&[]));
        let cols = (&d.cols.0[ca..ca + tile.cols.len()], d.cols.1.get(ca * np..(ca + tile.cols.len()) * np).unwrap_or(&[]));
        if g.gradient.is_some() {
            normalize_gradient_tile(&mut g, tile, rows, cols, symmetric);
        } else {
            normalize_tile(&mut g, tile, rows.0, cols.0, symmetric);
        }
    }
    Ok(g)
}

/// Write a computed tile (and its gradient) into the job's output files; returns the checksum of
/// what was written (see [`tile_checksum`]), which an interruption lists with the tile.
pub fn write_outputs(job: &Job, tile: &Tile, g: &Gram, out: &Outputs) -> octile::Result<String> {
    let mut sums = write_tile(job, tile, &out.values, 1, &g.values)?;
    if let (Some((w, np)), Some(grad)) = (&out.gradient, &g.gradient) {
        sums.extend(write_tile(job, tile, w, *np, &grad.values)?);
    }
    Ok(tile_sum(tile, &sums))
}

/// The checksum of `tile` as the output files hold it now: the same as [`write_outputs`] returned
/// when it wrote the tile, unless the files were edited or damaged since.
pub fn tile_checksum(job: &Job, tile: &Tile, out: &Outputs) -> octile::Result<String> {
    use rayon::prelude::*;
    let files = std::iter::once((&out.values, 1)).chain(out.gradient.as_ref().map(|(w, np)| (w, *np)));
    let mut sums = Vec::new();
    for (w, width) in files {
        let spans = spans(job, tile, width);
        let part: Vec<u64> = spans.par_iter().map(|&(first, n)| w.read_at(first, n).map(|v| values_checksum(&v))).collect::<octile::Result<_>>()?;
        sums.extend(part);
    }
    Ok(tile_sum(tile, &sums))
}

/// A tile's checksum: FNV-1a of its place (so that values moved to another tile do not match) and
/// of each span's [`values_checksum`] in [`spans`]' order, marked "v2:" (the byte-wise FNV-1a over
/// the values before it was not; an interrupted run of that octile cannot be resumed).
fn tile_sum(tile: &Tile, span_sums: &[u64]) -> String {
    let mut h = Fnv64::default();
    h.bytes(format!("{}:{},{}:{};", tile.rows.start, tile.rows.end, tile.cols.start, tile.cols.end).as_bytes());
    for s in span_sums {
        h.bytes(&s.to_le_bytes());
    }
    format!("{CHECKSUM_SCHEME}{}", h.hex())
}

/// The mark of [`tile_sum`]'s checksums.
pub const CHECKSUM_SCHEME: &str = "v2:";

/// Where a tile's values go in the job's output (`width` per entry): (first element, count) of
/// each row of the tile, then, for a tile written with its transpose ([`Job::mirrors`]), each row
/// of the transpose (row j, columns i.. of the output for the tile's column j and rows i..). The
/// one layout both writing and checking a tile follow.
fn spans(job: &Job, tile: &Tile, width: usize) -> Vec<(usize, usize)> {
    let (_, cols) = job.shape();
    let (nr, nc) = (tile.rows.len(), tile.cols.len());
    let (ra, ca) = (tile.rows.start - job.rows.start, tile.cols.start - job.cols.start);
    let mut out: Vec<(usize, usize)> = (0..nr).map(|a| (((ra + a) * cols + ca) * width, nc * width)).collect();
    if job.mirrors(tile) {
        // the transpose's place: the tile's columns as the output's rows, its rows as columns
        let (tr, tc) = (tile.cols.start - job.rows.start, tile.rows.start - job.cols.start);
        out.extend((0..nc).map(|b| (((tr + b) * cols + tc) * width, nr * width)));
    }
    out
}

/// Columns of a tile gathered together into rows of its transpose: the tile is read row by row,
/// a few cache lines at a time, instead of once per column.
pub const TRANSPOSE_GROUP: usize = 16;

/// Write a tile's `values` (`width` per entry, row-major) at its place in the job's output (see
/// [`spans`]); returns each span's [`values_checksum`], in order. Where the file allows
/// ([`NpyWriter::window`]), every span is copied into a mapping of the file on every core (one
/// system call a tile instead of one a row; `io::mapped` says why); else the transpose and the
/// checksums are made on every core and the writes go out from this one thread, in file order
/// (concurrent `pwrite`s into one file queue on its lock).
///
/// ```text
/// values (nr × nc, row-major)            file
/// row a ─────────────────────────────►   row ra + a, columns ca.. (one span)
/// columns b..b+16, read row by row ──►   rows ca + b.. of the transpose (16 spans)
/// ```
fn write_tile(job: &Job, tile: &Tile, w: &NpyWriter, width: usize, values: &[f64]) -> octile::Result<Vec<u64>> {
    let spans = spans(job, tile, width);
    let shape = (tile.rows.len(), tile.cols.len(), width);
    if let Some(first) = contiguous(&spans, values.len()) {
        // one piece of the file (a tile of whole rows: a one-tile call): one write, no mapping
        // (MUTAG's 283 KB: ~50 µs against ~250 µs of page faults in a fresh mapping)
        // (the spans follow each other: span k starts where k − 1 ended, from the tile's first value)
        w.write_at(first, values)?;
        let sum = |k: usize| {
            let (f, n) = spans[k];
            values_checksum(&values[f - first..f - first + n])
        };
        return Ok(octile::parallel::collect(spans.len(), octile::parallel::pooled(values.len()), sum));
    }
    let (rows, transposed) = spans.split_at(tile.rows.len().min(spans.len()));
    // the rows, then the transpose's rows: two bands apart, mapped apart
    let (row_band, transposed_band) = (band(rows), band(transposed));
    // SAFETY: the output files are written by this thread alone (the writer's, one tile at a
    // time), and both windows — over disjoint elements — are dropped at the end of this match,
    // before any positioned write.
    let mapped = match unsafe { (w.window(row_band.clone()), w.window(transposed_band.clone())) } {
        (Ok(Some(mut a)), Ok(Some(mut b))) => {
            write_mapped((a.elements_mut(), row_band.start), (b.elements_mut(), transposed_band.start), rows, transposed, shape, values)
        }
        // a window that cannot be made (no reserved blocks, no address space): positioned writes
        _ => None,
    };
    match mapped {
        Some(sums) => Ok(sums),
        None => write_positioned(w, &spans, shape, values),
    }
}

/// Where `spans` follow each other in the file with no gap and hold exactly the `len` values in
/// order: the first element (else `None`). A mirrored tile's transposed spans double its spans'
/// total, so the length check leaves only tiles of whole rows (their rows alone) to this path.
fn contiguous(spans: &[(usize, usize)], len: usize) -> Option<usize> {
    let &(first, _) = spans.first()?;
    let end = spans.iter().try_fold(first, |at, &(f, n)| (f == at).then_some(at + n))?;
    (end - first == len).then_some(first)
}

/// The elements from the first of `spans` (in file order) to the end of the last; empty for none.
fn band(spans: &[(usize, usize)]) -> std::ops::Range<usize> {
    match (spans.first(), spans.last()) {
        (Some(f), Some(l)) => f.0..l.0 + l.1,
        _ => 0..0,
    }
}

/// `window` (elements `lo..` of the file) cut into one slice per span of `spans` (in increasing
/// file order, not overlapping; else `None`).
fn carve<'a>((window, lo): (&'a mut [f64], usize), spans: &[(usize, usize)]) -> Option<Vec<&'a mut [f64]>> {
    let mut out = Vec::with_capacity(spans.len());
    let (mut rest, mut at) = (window, lo);
    for &(first, n) in spans {
        let (_, tail) = std::mem::take(&mut rest).split_at_mut_checked(first.checked_sub(at)?)?;
        let (d, tail) = tail.split_at_mut_checked(n)?;
        out.push(d);
        (rest, at) = (tail, first + n);
    }
    Some(out)
}

/// [`write_tile`] into two windows (the tile's rows' band and its transpose's): the tile's rows
/// copied and its columns transposed in place on every core, each span's checksum taken as it is
/// written, in [`spans`]' order. `None` (nothing written) if a group's spans are out of order or
/// overlap.
fn write_mapped(
    rows_window: (&mut [f64], usize),
    transposed_window: (&mut [f64], usize),
    rows: &[(usize, usize)],
    transposed: &[(usize, usize)],
    (nr, nc, width): (usize, usize, usize),
    values: &[f64],
) -> Option<Vec<u64>> {
    use rayon::prelude::*;
    let mut row_dest = carve(rows_window, rows)?;
    let mut transposed_dest = carve(transposed_window, transposed)?;
    let mut sums = vec![0u64; rows.len() + transposed.len()];
    let (row_sums, transposed_sums) = sums.split_at_mut(rows.len());
    row_dest.par_iter_mut().zip(row_sums.par_iter_mut()).enumerate().with_min_len(8).for_each(|(a, (d, s))| {
        let src = &values[a * nc * width..(a + 1) * nc * width];
        d.copy_from_slice(src);
        *s = values_checksum(src);
    });
    transposed_dest.par_chunks_mut(TRANSPOSE_GROUP).zip(transposed_sums.par_chunks_mut(TRANSPOSE_GROUP)).enumerate().for_each(|(g, (ds, ss))| {
        transpose_group(values, (nr, nc, width), g * TRANSPOSE_GROUP, ds);
        for (d, s) in ds.iter().zip(ss) {
            *s = values_checksum(d);
        }
    });
    Some(sums)
}

/// Rows `b0..b0 + out.len()` of the transpose of `values` (nr × nc, `width` per entry) into `out`
/// (one slice of nr · width each), reading `values` row by row.
fn transpose_group(values: &[f64], (nr, nc, width): (usize, usize, usize), b0: usize, out: &mut [&mut [f64]]) {
    let group = out.len();
    for a in 0..nr {
        let row = &values[(a * nc + b0) * width..(a * nc + b0 + group) * width];
        for (j, o) in out.iter_mut().enumerate() {
            o[a * width..(a + 1) * width].copy_from_slice(&row[j * width..(j + 1) * width]);
        }
    }
}

/// [`write_tile`] with positioned writes: the transpose made on every core, the checksums too,
/// then one `pwrite` per span from this thread, in file order.
fn write_positioned(w: &NpyWriter, spans: &[(usize, usize)], (nr, nc, width): (usize, usize, usize), values: &[f64]) -> octile::Result<Vec<u64>> {
    use rayon::prelude::*;
    let (rows, transposed) = spans.split_at(nr.min(spans.len()));
    // the transpose, row b = column b of the tile (empty for tiles that are not mirrored)
    let mut mirror = vec![0.0f64; transposed.len() * nr * width];
    mirror.par_chunks_mut((TRANSPOSE_GROUP * nr * width).max(1)).enumerate().for_each(|(g, out)| {
        let mut out: Vec<&mut [f64]> = out.chunks_mut((nr * width).max(1)).collect();
        transpose_group(values, (nr, nc, width), g * TRANSPOSE_GROUP, &mut out);
    });
    let pieces: Vec<(usize, &[f64])> = rows
        .iter()
        .enumerate()
        .map(|(a, &(first, _))| (first, &values[a * nc * width..(a + 1) * nc * width]))
        .chain(transposed.iter().enumerate().map(|(b, &(first, _))| (first, &mirror[b * nr * width..(b + 1) * nr * width])))
        .collect();
    debug_assert!(pieces.iter().zip(spans).all(|((_, p), &(_, n))| p.len() == n));
    let sums: Vec<u64> = pieces.par_iter().map(|(_, p)| values_checksum(p)).collect();
    for &(first, piece) in &pieces {
        w.write_at(first, piece)?;
    }
    Ok(sums)
}

/// `A:B` (half-open, 0-based) within `0..n`.
pub fn parse_range(s: &str, n: usize, flag: &str) -> anyhow::Result<Range<usize>> {
    let bad = || anyhow::anyhow!("{flag} {s}: give A:B, half-open and 0-based, within 0:{n} (e.g. {flag} 0:{})", n.min(1000));
    let (a, b) = s.split_once(':').ok_or_else(bad)?;
    let a: usize = if a.trim().is_empty() { 0 } else { a.trim().parse().map_err(|_| bad())? };
    let b: usize = if b.trim().is_empty() { n } else { b.trim().parse().map_err(|_| bad())? };
    if a > b || b > n {
        return Err(bad());
    }
    Ok(a..b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_parse_half_open_and_refuse_outside() {
        assert_eq!(parse_range("2:5", 10, "--rows").unwrap(), 2..5);
        assert_eq!(parse_range(":5", 10, "--rows").unwrap(), 0..5);
        assert_eq!(parse_range("7:", 10, "--rows").unwrap(), 7..10);
        assert_eq!(parse_range("3:3", 10, "--rows").unwrap(), 3..3);
        for bad in ["5:2", "0:11", "x:3", "3", "-1:2"] {
            let e = parse_range(bad, 10, "--cols").unwrap_err().to_string();
            assert!(e.contains("--cols") && e.contains("0:10"), "{bad}: {e}");
        }
    }

    #[test]
    fn tiles_are_written_in_place_and_checksummed_as_read_back() {
        // K(X) of 60 graphs and its tile rows 0..27 × columns 27..60: 33 columns, so the transposed
        // rows are written in groups of 16, 16 and 1; values and ∂K/∂θ of 3 hyperparameters (then
        // a tile on the diagonal and a tile of K(X, Y), neither mirrored)
        let dir = std::env::temp_dir().join(format!("octile-tiled-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (n, nr, nc, np) = (60, 27, 33, 3);
        let job = Job { x: &[], y: None, rows: 0..n, cols: 0..n, normalized: false, tile_size: 30 };
        let tile = Tile { rows: 0..nr, cols: nr..n };
        let values: Vec<f64> = (0..nr * nc).map(|e| 1.0 + e as f64 * 1e-3).collect();
        let grad: Vec<f64> = (0..nr * nc * np).map(|e| -(e as f64) * 0.5 - 0.25).collect();
        let g = Gram {
            rows: nr,
            cols: nc,
            values: values.clone(),
            info: Vec::new(),
            pairs_solved: nr * nc,
            backend: "cpu".into(),
            device: String::new(),
            seconds: 0.0,
            details: Details::default(),
            gradient: Some(octile::Gradient { names: vec!["a".into(), "b".into(), "c".into()], values: grad.clone() }),
        };
        let out = Outputs {
            values: NpyWriter::create(&dir.join("K.npy"), &[n, n]).unwrap(),
            gradient: Some((NpyWriter::create(&dir.join("G.npy"), &[n, n, np]).unwrap(), np)),
        };
        let sum = write_outputs(&job, &tile, &g, &out).unwrap();
        assert!(sum.starts_with(CHECKSUM_SCHEME), "{sum}");
        assert_eq!(tile_checksum(&job, &tile, &out).unwrap(), sum, "the checksum of what the files hold");
        let (k, d) = (out.values.read_at(0, n * n).unwrap(), out.gradient.as_ref().unwrap().0.read_at(0, n * n * np).unwrap());
        for a in 0..nr {
            for b in 0..nc {
                let (i, j, e) = (a, nr + b, a * nc + b);
                for (at, what) in [(i * n + j, "entry"), (j * n + i, "mirror")] {
                    assert_eq!(k[at].to_bits(), values[e].to_bits(), "K {what} of ({i}, {j}): {} written, {} computed", k[at], values[e]);
                    assert_eq!(&d[at * np..(at + 1) * np], &grad[e * np..(e + 1) * np], "∂K {what} of ({i}, {j})");
                }
            }
        }
        // one value of a mirror changed in the file: the checksum no longer matches
        out.values.write_at((nr + 20) * n + 5, &[7.0]).unwrap();
        assert_ne!(tile_checksum(&job, &tile, &out).unwrap(), sum, "an edited mirror entry");
        // a tile on the diagonal (rows only, no mirror) and a tile of K(X, Y) (no mirror either)
        let plain = |rows: usize, cols: usize| Gram { rows, cols, values: (0..rows * cols).map(|e| 2.0 + e as f64).collect(), gradient: None, ..g.clone() };
        let diag = Tile { rows: 30..47, cols: 30..47 };
        let gd = plain(17, 17);
        let out1 = Outputs { values: NpyWriter::create(&dir.join("D.npy"), &[n, n]).unwrap(), gradient: None };
        let sum = write_outputs(&job, &diag, &gd, &out1).unwrap();
        assert_eq!(tile_checksum(&job, &diag, &out1).unwrap(), sum);
        let against = Job { y: Some(&[]), rows: 0..n, cols: 0..40, ..job };
        let ty = Tile { rows: 10..29, cols: 3..40 };
        let gy = plain(19, 37);
        let out2 = Outputs { values: NpyWriter::create(&dir.join("Y.npy"), &[n, 40]).unwrap(), gradient: None };
        let sum2 = write_outputs(&against, &ty, &gy, &out2).unwrap();
        assert_eq!(tile_checksum(&against, &ty, &out2).unwrap(), sum2);
        let (kd, ky) = (out1.values.read_at(0, n * n).unwrap(), out2.values.read_at(0, n * 40).unwrap());
        for i in 0..n {
            for j in 0..n {
                let want = if diag.rows.contains(&i) && diag.cols.contains(&j) { gd.values[(i - 30) * 17 + j - 30] } else { 0.0 };
                assert_eq!(kd[i * n + j].to_bits(), want.to_bits(), "diagonal tile's file at ({i}, {j})");
            }
            for j in 0..40 {
                let want = if ty.rows.contains(&i) && ty.cols.contains(&j) { gy.values[(i - 10) * 37 + j - 3] } else { 0.0 };
                assert_eq!(ky[i * 40 + j].to_bits(), want.to_bits(), "K(X, Y) tile's file at ({i}, {j})");
            }
        }
        // tiles of whole rows, one piece of the file each (K(X, Y) of every column; a one-tile
        // K(X)): one write, and the checksums of what the file then holds
        let wide = Tile { rows: 31..44, cols: 0..40 };
        let gw = plain(13, 40);
        let sum3 = write_outputs(&against, &wide, &gw, &out2).unwrap();
        assert_eq!(tile_checksum(&against, &wide, &out2).unwrap(), sum3, "a tile of whole rows of K(X, Y)");
        let ky = out2.values.read_at(0, n * 40).unwrap();
        for (e, v) in gw.values.iter().enumerate() {
            let at = (31 + e / 40) * 40 + e % 40;
            assert_eq!(ky[at].to_bits(), v.to_bits(), "whole rows of K(X, Y): element {at}: {} written, {v} computed", ky[at]);
        }
        let one_job = Job { rows: 0..17, cols: 0..17, ..job };
        let one = Tile { rows: 0..17, cols: 0..17 };
        let out3 = Outputs { values: NpyWriter::create(&dir.join("W.npy"), &[17, 17]).unwrap(), gradient: None };
        let sum4 = write_outputs(&one_job, &one, &gd, &out3).unwrap();
        assert_eq!(tile_checksum(&one_job, &one, &out3).unwrap(), sum4, "a one-tile K(X)");
        let kw = out3.values.read_at(0, 17 * 17).unwrap();
        assert!(kw.iter().zip(&gd.values).all(|(a, b)| a.to_bits() == b.to_bits()), "a one-tile K(X): the file holds the tile");
        // both took the one-write path; a mirrored tile off the diagonal did not
        assert!(contiguous(&spans(&against, &wide, 1), 13 * 40).is_some() && contiguous(&spans(&one_job, &one, 3), 17 * 17 * 3).is_some());
        assert!(contiguous(&spans(&job, &tile, 1), nr * nc).is_none());
        // a one-tile K(X) with ∂K/∂θ (3 per entry): the gradient's file in one write too
        let gg = Gram {
            gradient: Some(octile::Gradient { names: vec!["a".into(), "b".into(), "c".into()], values: (0..17 * 17 * np).map(|e| 0.5 - e as f64).collect() }),
            ..gd.clone()
        };
        let out4 = Outputs {
            values: NpyWriter::create(&dir.join("W2.npy"), &[17, 17]).unwrap(),
            gradient: Some((NpyWriter::create(&dir.join("WG.npy"), &[17, 17, np]).unwrap(), np)),
        };
        let sum5 = write_outputs(&one_job, &one, &gg, &out4).unwrap();
        assert_eq!(tile_checksum(&one_job, &one, &out4).unwrap(), sum5, "a one-tile K(X) with its gradient");
        let dw = out4.gradient.as_ref().unwrap().0.read_at(0, 17 * 17 * np).unwrap();
        let want = &gg.gradient.as_ref().unwrap().values;
        assert!(dw.iter().zip(want).all(|(a, b)| a.to_bits() == b.to_bits()), "a one-tile K(X): the gradient's file holds the tile's ∂K/∂θ");
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn mapped_and_positioned_writes_give_the_same_file_and_checksums() {
        // a mirrored tile off the diagonal (rows and the transpose's rows, groups of 16, 16, 5),
        // with 2 values per entry (∂K/∂θ's layout); each writer into its own file
        let dir = std::env::temp_dir().join(format!("octile-writers-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (n, nr, nc, width) = (70, 23, 37, 2);
        let job = Job { x: &[], y: None, rows: 0..n, cols: 0..n, normalized: false, tile_size: 33 };
        let tile = Tile { rows: 5..5 + nr, cols: 33..33 + nc };
        let values: Vec<f64> = (0..nr * nc * width).map(|e| (e as f64 * 0.37).sin() + 2.0).collect();
        let sp = spans(&job, &tile, width);
        let (rows, transposed) = sp.split_at(nr);
        let (a, b) = (NpyWriter::create(&dir.join("A.npy"), &[n, n, width]).unwrap(), NpyWriter::create(&dir.join("B.npy"), &[n, n, width]).unwrap());
        let positioned = write_positioned(&a, &sp, (nr, nc, width), &values).unwrap();
        // SAFETY: this test alone writes B.npy, through these two windows over disjoint elements
        let mapped = match unsafe { (b.window(band(rows)).unwrap(), b.window(band(transposed)).unwrap()) } {
            (Some(mut wr), Some(mut wt)) => {
                write_mapped((wr.elements_mut(), band(rows).start), (wt.elements_mut(), band(transposed).start), rows, transposed, (nr, nc, width), &values)
                    .expect("spans in order")
            }
            _ => {
                println!("SKIP mapped writes: this file system cannot reserve blocks (positioned writes only)");
                return;
            }
        };
        assert_eq!(mapped, positioned, "checksums of the two writers");
        let (fa, fb) = (a.read_at(0, n * n * width).unwrap(), b.read_at(0, n * n * width).unwrap());
        for (k, (x, y)) in fa.iter().zip(&fb).enumerate() {
            assert_eq!(x.to_bits(), y.to_bits(), "element {k}: {y} mapped, {x} positioned");
        }
        assert!(fa.iter().filter(|v| **v != 0.0).count() == 2 * nr * nc * width, "both the tile and its mirror written");
        // overlapping or unordered spans are refused before anything is written
        let mut window = vec![0.0; 40];
        assert!(carve((&mut window, 0), &[(0, 10), (5, 10)]).is_none());
        assert!(carve((&mut window, 0), &[(20, 10), (0, 10)]).is_none());
        assert!(write_mapped((&mut window, 0), (&mut [], 0), &[(0, 10), (5, 10)], &[], (2, 10, 1), &[1.0; 20]).is_none());
        assert!(window.iter().all(|v| *v == 0.0));
        assert_eq!(carve((&mut window, 3), &[(5, 2), (10, 4)]).map(|d| d.iter().map(|s| s.len()).collect::<Vec<_>>()), Some(vec![2, 4]));
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn tiles_tallied_apart_and_merged_equal_one_tally() {
        // K(X) mirrored: a tile off the diagonal (failures listed both ways) and one on it (the
        // entries below its diagonal not counted), each with a pair that did not converge
        let info = |n: usize, bad: usize| -> Vec<PairInfo> {
            (0..n).map(|e| PairInfo { iterations: (e % 7) as u32 + 1, residual: 1e-9, converged: e != bad }).collect()
        };
        let gram = |rows: usize, cols: usize, bad: usize| Gram {
            rows,
            cols,
            values: vec![1.0; rows * cols],
            info: info(rows * cols, bad),
            pairs_solved: rows * cols,
            backend: "cpu".into(),
            device: String::new(),
            seconds: 0.0,
            details: Details::default(),
            gradient: None,
        };
        let (ta, ga) = (Tile { rows: 0..4, cols: 4..9 }, gram(4, 5, 3));
        let (tb, gb) = (Tile { rows: 4..9, cols: 4..9 }, gram(5, 5, 12));
        let job = Job { x: &[], y: None, rows: 0..9, cols: 0..9, normalized: false, tile_size: 5 };
        let mut one = Tally::default();
        one.add(&ga, &ta, &job);
        one.add(&gb, &tb, &job);
        let mut merged = Tally::default();
        for (g, t) in [(&ga, &ta), (&gb, &tb)] {
            let mut part = Tally::default();
            part.add(g, t, &job);
            merged.merge(part);
        }
        assert_eq!((merged.pairs, merged.failed_pairs, &merged.iterations), (one.pairs, one.failed_pairs, &one.iterations));
        let key = |t: &Tally| t.failures.iter().map(|(i, j, f)| (*i, *j, f.iterations)).collect::<Vec<_>>();
        assert_eq!(key(&merged), key(&one));
        assert_eq!(key(&one), vec![(0, 7, 4), (7, 0, 4), (6, 6, 6)], "failures listed as they were met");
        assert_eq!(merged.iteration_stats(), one.iteration_stats());
    }

    #[test]
    fn tally_medians_over_the_histogram() {
        let t = Tally { iterations: vec![0, 2, 0, 5, 1], ..Tally::default() };
        assert_eq!(t.iteration_stats(), (1, 3, 4));
        assert_eq!(Tally::default().iteration_stats(), (0, 0, 0));
    }
}
