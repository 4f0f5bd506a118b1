//! Tuning profiles: which tile-pair primitive wins for each (nnz_A, nnz_B) bin pair, measured per
//! device and precision by `octile tune`, and how the solver finds the one that applies.
//!
//! File format (JSON; `octile tune` writes it, users may edit it):
//! ```text
//! { "version": 1,
//!   "profiles": [
//!     { "backend": "cuda", "device": "NVIDIA H200", "arch": "sm_90", "precision": "f32",
//!       "unlabeled": ["SSSS…", … 17 rows of 17 letters …],   row = bin of nnz(A), column = bin of nnz(B)
//!       "labeled":   [ … ],                                   bin = nnz / 4 (bin 16 = 64 nonzeros)
//!       "labeled_cheap": [ … ],                               optional
//!       "dense_walk": "blocked",                              optional: the D/R walks timed
//!                                                             ("shared" when absent)
//!       "timings_ns": { "unlabeled": { "D": [289 numbers], "L": …, "R": …, "S": … }, "labeled": … } } ] }
//! ```
//! Letters: `D` dense×dense, `L` dense×sparse (A dense), `R` sparse×dense (B dense), `S`
//! sparse×sparse. Which map applies depends on the cost of the edge kernel κe ([`EdgeCost`]): the
//! `unlabeled` map when κe reads no edge feature (κe ≡ const), `labeled_cheap` when it reads
//! features with Kronecker deltas only (a compare and a select per term), `labeled` when some term
//! evaluates an exponential (square exponential): the costlier κe, the more a sparse walk saves by
//! skipping absent entries, so the maps differ. A profile without `labeled_cheap` (older files)
//! uses `labeled` for cheap kernels too. A profile is measured with one dense walk of B (`D`, `R`):
//! shared tiling (the default; `dense_walk` absent) or tiling-blocking (`octile tune --dense-walk
//! blocked`); a run uses the profile of its own walk, else the device's shared-walk profile (the
//! summary says so).
//!
//! Lookup order for a run: the file named in the config (`profile = …`), else `$OCTILE_PROFILE`,
//! else the user store (`$XDG_CONFIG_HOME/octile/profiles.json` or `~/.config/octile/profiles.json`,
//! where `octile tune` writes by default), else the profiles shipped with octile
//! (`host/profiles/default.json`, measured on an H200 and on the CI CPU). In each file the entry
//! for this backend, precision and device name wins; else one for the same arch. If nothing
//! matches, the paper's rule applies (sparse×sparse while both tiles hold at most 11 nonzeros,
//! 19 when labeled; dense×dense beyond).
use crate::error::{OctileError, Result};
use crate::mgk::config::{PrimitiveChoice, TileOptions};
use octile_types::mgk::primitives::{NNZ_BINS, Primitive, PrimitiveMap};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The profiles shipped with octile.
pub const SHIPPED: &str = include_str!("../../profiles/default.json");

/// Measured time per tile pair (ns), per primitive letter, 289 values each (bin_A·17 + bin_B).
pub type Timings = BTreeMap<String, Vec<f64>>;

/// One device × precision.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    /// "cuda" or "cpu".
    pub backend: String,
    /// GPU name (e.g. "NVIDIA H200") or CPU model.
    pub device: String,
    /// "sm_90", or the CPU architecture ("x86_64").
    pub arch: String,
    /// "f32" or "f64".
    pub precision: String,
    /// Map for κe ≡ const (17 strings of 17 letters).
    pub unlabeled: Vec<String>,
    /// Map for κe reading edge features with an exponential term (measured: delta × square exponential).
    pub labeled: Vec<String>,
    /// Map for κe reading edge features with Kronecker deltas only (measured: one delta); optional.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labeled_cheap: Option<Vec<String>>,
    /// The walk of B the dense primitives were timed with: `None` or "shared" (shared tiling),
    /// "blocked" (tiling-blocking).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dense_walk: Option<String>,
    /// Optional: the measurements the maps were made from ("unlabeled"/"labeled" → letter → ns).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timings_ns: Option<BTreeMap<String, Timings>>,
}

impl Profile {
    /// The dense walk the profile was measured with: "shared" or "blocked".
    pub fn walk(&self) -> &str {
        self.dense_walk.as_deref().unwrap_or("shared")
    }
}

/// A profile file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProfileFile {
    /// Format version (1).
    pub version: u32,
    /// The profiles.
    pub profiles: Vec<Profile>,
}

/// The solver's map and where it came from.
#[derive(Clone, Debug, PartialEq)]
pub struct MapSource {
    /// The map.
    pub map: PrimitiveMap,
    /// Where it came from (for summaries and logs).
    pub origin: MapOrigin,
}

/// Where a primitive map came from. Its `Display` is the line summaries show, e.g.
/// `adaptive: /home/u/.config/octile/profiles.json [NVIDIA H200 f32 labeled]`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "source", rename_all = "snake_case")]
pub enum MapOrigin {
    /// One primitive for every tile pair (`primitive = "..."`).
    Fixed {
        /// Its name ("dense-dense", ...).
        primitive: &'static str,
    },
    /// A tuned profile.
    Profile {
        /// The profile file; `None`: the profiles shipped with octile.
        file: Option<String>,
        /// The profile's device.
        device: String,
        /// Its precision.
        precision: String,
        /// The dense walk it was tuned with ("shared" or "blocked").
        walk: String,
        /// Which of its maps: "unlabeled", "labeled" or "labeled_cheap" ([`EdgeCost`]).
        map: &'static str,
        /// The map the edge kernel's cost asked for, when the profile lacks it (an older profile
        /// without `labeled_cheap`).
        missing_map: Option<&'static str>,
        /// The run's own dense walk, when the profile was tuned with another (no profile of it).
        run_walk: Option<String>,
    },
    /// No profile for the device: the built-in rule.
    BuiltIn {
        /// The backend, device and precision no profile was found for.
        backend: String,
        /// Device.
        device: String,
        /// Precision.
        precision: String,
        /// The map asked for ([`EdgeCost::name`]).
        map: &'static str,
    },
}

impl std::fmt::Display for MapOrigin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MapOrigin::Fixed { primitive } => write!(f, "fixed: {primitive}"),
            MapOrigin::Profile { file, device, precision, walk, map, missing_map, run_walk } => {
                write!(f, "adaptive: {} [{device} {precision}", file.as_deref().unwrap_or("shipped profile"))?;
                if walk != "shared" {
                    write!(f, " {walk}-walk")?;
                }
                write!(f, " {map}")?;
                if let Some(m) = missing_map {
                    write!(f, " (no {m} map in this profile)")?;
                }
                f.write_str("]")?;
                match run_walk {
                    Some(w) => write!(f, " (no {w}-walk profile: tuned with {walk} walks)"),
                    None => Ok(()),
                }
            }
            MapOrigin::BuiltIn { backend, device, precision, map } => {
                write!(f, "adaptive: built-in rule (no profile for {backend} {device} {precision}) [{map}]")
            }
        }
    }
}

/// Parse 17 strings of 17 letters into a map.
pub fn map_from_rows(rows: &[String]) -> std::result::Result<PrimitiveMap, String> {
    if rows.len() != NNZ_BINS {
        return Err(format!("a map has {NNZ_BINS} rows, found {}", rows.len()));
    }
    let mut m = PrimitiveMap::uniform(Primitive::DenseDense);
    for (a, row) in rows.iter().enumerate() {
        let letters: Vec<char> = row.chars().collect();
        if letters.len() != NNZ_BINS {
            return Err(format!("row {a} has {} letters, expected {NNZ_BINS}", letters.len()));
        }
        for (b, c) in letters.into_iter().enumerate() {
            m.set(a, b, Primitive::from_letter(c).ok_or_else(|| format!("row {a}, column {b}: '{c}' is not one of D, L, R, S"))?);
        }
    }
    Ok(m)
}

/// The 17 rows of letters of a map.
pub fn map_to_rows(m: &PrimitiveMap) -> Vec<String> {
    (0..NNZ_BINS).map(|a| (0..NNZ_BINS).map(|b| Primitive::from_code(m.codes[a * NNZ_BINS + b]).letter()).collect()).collect()
}

/// The paper's rule when no profile applies.
pub fn fallback_map(labeled: bool) -> PrimitiveMap {
    PrimitiveMap::threshold(if labeled { 4 } else { 2 })
}

/// Cost class of an edge kernel κe, which selects the map of a profile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EdgeCost {
    /// κe reads no edge feature (constant terms only).
    Unlabeled,
    /// Kronecker deltas (and constants) only.
    Cheap,
    /// Some term evaluates an exponential.
    Costly,
}

impl EdgeCost {
    /// The class of `spec`.
    pub fn of(spec: &octile_types::KernelSpec) -> Self {
        use octile_types::BaseKernelKind as K;
        let kinds: Vec<Option<K>> = spec.terms().iter().map(|t| K::from_u32(t.kind)).collect();
        if kinds.iter().all(|k| *k == Some(K::Constant)) {
            EdgeCost::Unlabeled
        } else if kinds.iter().all(|k| matches!(k, Some(K::Constant | K::KroneckerDelta))) {
            EdgeCost::Cheap
        } else {
            EdgeCost::Costly
        }
    }
    /// Name used in profiles and summaries.
    pub fn name(self) -> &'static str {
        match self {
            EdgeCost::Unlabeled => "unlabeled",
            EdgeCost::Cheap => "labeled_cheap",
            EdgeCost::Costly => "labeled",
        }
    }
}

impl ProfileFile {
    /// Parse; errors name the file.
    pub fn parse(text: &str, path: &Path) -> Result<Self> {
        let f: ProfileFile =
            serde_json::from_str(text).map_err(|e| OctileError::Parse { path: path.to_path_buf(), line: e.line(), what: format!("profile file: {e}") })?;
        if f.version != 1 {
            return Err(OctileError::Parse { path: path.to_path_buf(), line: 0, what: format!("profile version {} (this octile reads version 1)", f.version) });
        }
        for p in &f.profiles {
            if !matches!(p.walk(), "shared" | "blocked") {
                return Err(OctileError::Parse {
                    path: path.to_path_buf(),
                    line: 0,
                    what: format!("profile {} {} {}: dense_walk \"{}\" (use \"shared\" or \"blocked\")", p.backend, p.device, p.precision, p.walk()),
                });
            }
            for rows in [&p.unlabeled, &p.labeled].into_iter().chain(p.labeled_cheap.as_ref()) {
                map_from_rows(rows).map_err(|what| OctileError::Parse {
                    path: path.to_path_buf(),
                    line: 0,
                    what: format!("profile {} {} {}: {what}", p.backend, p.device, p.precision),
                })?;
            }
        }
        Ok(f)
    }

    /// Read a file.
    pub fn read(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| OctileError::Io { path: path.to_path_buf(), cause: e })?;
        Self::parse(&text, path)
    }

    /// The shipped profiles (parsed once per process).
    pub fn shipped() -> &'static Self {
        static SHIPPED_FILE: std::sync::OnceLock<ProfileFile> = std::sync::OnceLock::new();
        SHIPPED_FILE.get_or_init(|| Self::parse(SHIPPED, Path::new("host/profiles/default.json")).expect("shipped profiles parse (tested)"))
    }

    /// Best entry: same backend, precision and dense walk (`"shared"` or `"blocked"`), same device
    /// name, else same arch.
    pub fn find(&self, backend: &str, device: &str, arch: &str, precision: &str, walk: &str) -> Option<&Profile> {
        let cands = || self.profiles.iter().filter(|p| p.backend == backend && p.precision == precision && p.walk() == walk);
        cands().find(|p| p.device == device).or_else(|| cands().find(|p| p.arch == arch))
    }

    /// Insert `p`, replacing an entry with the same backend, device, precision and dense walk.
    pub fn upsert(&mut self, p: Profile) {
        self.profiles.retain(|q| !(q.backend == p.backend && q.device == p.device && q.precision == p.precision && q.walk() == p.walk()));
        self.profiles.push(p);
    }
}

/// The user profile store: `$XDG_CONFIG_HOME/octile/profiles.json` or `~/.config/octile/profiles.json`.
pub fn user_store() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(base.join("octile").join("profiles.json"))
}

/// The map the solver uses for these tile options on this backend/device/precision.
pub fn resolve(tiles: &TileOptions, backend: &str, device: &str, arch: &str, precision: &str, cost: EdgeCost) -> Result<MapSource> {
    if let PrimitiveChoice::Fixed(p) = tiles.primitive {
        return Ok(MapSource { map: PrimitiveMap::uniform(p), origin: MapOrigin::Fixed { primitive: crate::mgk::config::primitive_name(p) } });
    }
    let labeled = cost != EdgeCost::Unlabeled;
    let kind = cost.name();
    let pick = |p: &Profile, file: Option<&String>, run_walk: Option<&str>| -> MapSource {
        let (rows, map, missing_map) = match (cost, &p.labeled_cheap) {
            (EdgeCost::Unlabeled, _) => (&p.unlabeled, kind, None),
            (EdgeCost::Cheap, Some(rows)) => (rows, kind, None),
            (EdgeCost::Cheap, None) => (&p.labeled, EdgeCost::Costly.name(), Some(kind)),
            (EdgeCost::Costly, _) => (&p.labeled, kind, None),
        };
        let origin = MapOrigin::Profile {
            file: file.cloned(),
            device: p.device.clone(),
            precision: p.precision.clone(),
            walk: p.walk().to_string(),
            map,
            missing_map,
            run_walk: run_walk.map(str::to_string),
        };
        MapSource { map: map_from_rows(rows).expect("validated on parse"), origin }
    };
    // an explicitly named file must exist and parse; the user store is optional
    let from_env = std::env::var_os("OCTILE_PROFILE").filter(|v| !v.is_empty()).map(PathBuf::from);
    let user = match (&tiles.profile, &from_env) {
        (Some(path), _) => Some((ProfileFile::read(path)?, path.display().to_string())),
        // a file named by the environment: its errors say where the name came from
        (None, Some(path)) => Some((
            ProfileFile::read(path).map_err(|e| OctileError::InvalidRequest(format!("OCTILE_PROFILE={}: {e}", path.display())))?,
            path.display().to_string(),
        )),
        (None, None) => match user_store().filter(|p| p.is_file()) {
            Some(path) => Some((ProfileFile::read(&path)?, path.display().to_string())),
            None => None,
        },
    };
    // the run's own walk first (user file, then shipped), then the shared-walk profiles
    let walk = tiles.dense_walk.name();
    let mut tries: Vec<&str> = vec![walk];
    if walk != "shared" {
        tries.push("shared");
    }
    for w in tries {
        let run_walk = (w != walk).then_some(walk);
        if let Some((f, origin)) = &user
            && let Some(p) = f.find(backend, device, arch, precision, w)
        {
            return Ok(pick(p, Some(origin), run_walk));
        }
        if let Some(p) = ProfileFile::shipped().find(backend, device, arch, precision, w) {
            return Ok(pick(p, None, run_walk));
        }
    }
    let origin = MapOrigin::BuiltIn { backend: backend.to_string(), device: device.to_string(), precision: precision.to_string(), map: kind };
    Ok(MapSource { map: fallback_map(labeled), origin })
}

/// The CPU's model name (from /proc/cpuinfo), or the architecture.
pub fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| t.lines().find(|l| l.starts_with("model name")).and_then(|l| l.split(':').nth(1)).map(|s| s.trim().to_string()))
        .unwrap_or_else(|| std::env::consts::ARCH.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_profiles_parse_and_cover_sm90_and_cpu() {
        let f = ProfileFile::shipped();
        for prec in ["f32", "f64"] {
            assert!(f.find("cuda", "any H100/H200", "sm_90", prec, "shared").is_some(), "no sm_90 {prec} profile shipped");
            assert!(f.find("cpu", "any CPU", std::env::consts::ARCH, prec, "shared").is_some(), "no cpu {prec} profile shipped");
        }
    }

    #[test]
    fn rows_round_trip_and_bad_letters_are_errors() {
        let m = fallback_map(true);
        assert_eq!(map_from_rows(&map_to_rows(&m)).unwrap(), m);
        let mut rows = map_to_rows(&m);
        rows[3] = rows[3].replacen('S', "X", 1);
        let e = map_from_rows(&rows).unwrap_err();
        assert!(e.contains("row 3") && e.contains("'X'"), "{e}");
        assert!(map_from_rows(&rows[..5]).unwrap_err().contains("17 rows"));
    }

    #[test]
    fn bad_profile_file_is_a_parse_error_naming_the_file() {
        let e = ProfileFile::parse("{\"version\": 1, \"profiles\": [", Path::new("x.json")).unwrap_err();
        assert!(matches!(e, OctileError::Parse { .. }) && e.to_string().contains("x.json"), "{e}");
        let e = ProfileFile::parse("{\"version\": 7, \"profiles\": []}", Path::new("y.json")).unwrap_err();
        assert!(e.to_string().contains("version 7"), "{e}");
        let rows = serde_json::to_string(&map_to_rows(&fallback_map(false))).unwrap();
        let text = format!(
            "{{\"version\": 1, \"profiles\": [{{\"backend\": \"cpu\", \"device\": \"X\", \"arch\": \"a\", \"precision\": \"f64\", \"unlabeled\": {rows}, \"labeled\": {rows}, \"dense_walk\": \"registers\"}}]}}"
        );
        let e = ProfileFile::parse(&text, Path::new("z.json")).unwrap_err();
        assert!(e.to_string().contains("z.json") && e.to_string().contains("dense_walk \"registers\""), "{e}");
    }

    #[test]
    fn edge_cost_classes_pick_their_maps() {
        use octile_types::{BaseKernel, KernelSpec};
        let mut delta = KernelSpec::unit();
        delta.n_terms = 1;
        delta.terms[0] = BaseKernel::kronecker_delta(0, 0.5);
        assert_eq!(EdgeCost::of(&KernelSpec::unit()), EdgeCost::Unlabeled);
        assert_eq!(EdgeCost::of(&delta), EdgeCost::Cheap);
        let mut costly = delta;
        costly.n_terms = 2;
        costly.terms[1] = BaseKernel::square_exponential(1, 1.0);
        assert_eq!(EdgeCost::of(&costly), EdgeCost::Costly);
        let (u, l, c) = (vec!["S".repeat(17); 17], vec!["D".repeat(17); 17], vec!["R".repeat(17); 17]);
        let mut p = Profile {
            backend: "cpu".into(),
            device: "X".into(),
            arch: "a".into(),
            precision: "f64".into(),
            unlabeled: u,
            labeled: l,
            labeled_cheap: Some(c),
            dense_walk: None,
            timings_ns: None,
        };
        let dir = std::env::temp_dir().join(format!("octile-cost-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("p.json");
        let tiles = TileOptions { profile: Some(path.clone()), ..TileOptions::default() };
        let first = |cost| resolve(&tiles, "cpu", "X", "a", "f64", cost).unwrap().map.codes[0];
        std::fs::write(&path, serde_json::to_string(&ProfileFile { version: 1, profiles: vec![p.clone()] }).unwrap()).unwrap();
        assert_eq!(first(EdgeCost::Unlabeled), Primitive::SparseSparse as u8);
        assert_eq!(first(EdgeCost::Cheap), Primitive::SparseDense as u8);
        assert_eq!(first(EdgeCost::Costly), Primitive::DenseDense as u8);
        p.labeled_cheap = None; // an older profile: cheap kernels use the labeled map
        std::fs::write(&path, serde_json::to_string(&ProfileFile { version: 1, profiles: vec![p] }).unwrap()).unwrap();
        assert_eq!(first(EdgeCost::Cheap), Primitive::DenseDense as u8);
        assert!(
            resolve(&tiles, "cpu", "X", "a", "f64", EdgeCost::Cheap).unwrap().origin.to_string().contains("labeled (no labeled_cheap map in this profile)")
        );
    }

    #[test]
    fn upsert_replaces_same_key() {
        let mut f = ProfileFile { version: 1, profiles: vec![] };
        let rows = map_to_rows(&fallback_map(false));
        let p = Profile {
            backend: "cpu".into(),
            device: "X".into(),
            arch: "x86_64".into(),
            precision: "f64".into(),
            unlabeled: rows.clone(),
            labeled: rows,
            labeled_cheap: None,
            dense_walk: None,
            timings_ns: None,
        };
        f.upsert(p.clone());
        f.upsert(p.clone());
        assert_eq!(f.profiles.len(), 1);
        // another walk is another entry
        f.upsert(Profile { dense_walk: Some("blocked".into()), ..p });
        assert_eq!(f.profiles.len(), 2);
    }

    #[test]
    fn runs_use_the_profile_of_their_walk_else_the_shared_one() {
        use crate::mgk::config::DenseWalk;
        let rows = |c: &str| vec![c.repeat(17); 17];
        let shared = Profile {
            backend: "cpu".into(),
            device: "X".into(),
            arch: "a".into(),
            precision: "f64".into(),
            unlabeled: rows("S"),
            labeled: rows("S"),
            labeled_cheap: None,
            dense_walk: None,
            timings_ns: None,
        };
        let blocked = Profile { unlabeled: rows("D"), labeled: rows("D"), dense_walk: Some("blocked".into()), ..shared.clone() };
        let dir = std::env::temp_dir().join(format!("octile-walk-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("p.json");
        let tiles = |walk| TileOptions { profile: Some(path.clone()), dense_walk: walk, ..TileOptions::default() };
        let get = |walk| resolve(&tiles(walk), "cpu", "X", "a", "f64", EdgeCost::Costly).unwrap();
        std::fs::write(&path, serde_json::to_string(&ProfileFile { version: 1, profiles: vec![shared.clone(), blocked] }).unwrap()).unwrap();
        assert_eq!(get(DenseWalk::SharedTiling).map.codes[0], Primitive::SparseSparse as u8);
        let b = get(DenseWalk::TilingBlocking);
        assert_eq!(b.map.codes[0], Primitive::DenseDense as u8);
        assert!(b.origin.to_string().contains("blocked-walk"), "{}", b.origin);
        // no blocked-walk profile for this device: the shared one, and the summary says so
        std::fs::write(&path, serde_json::to_string(&ProfileFile { version: 1, profiles: vec![shared] }).unwrap()).unwrap();
        let f = get(DenseWalk::TilingBlocking);
        assert_eq!(f.map.codes[0], Primitive::SparseSparse as u8);
        assert_eq!(f.origin.to_string(), format!("adaptive: {} [X f64 labeled] (no blocked-walk profile: tuned with shared walks)", path.display()));
    }
}
