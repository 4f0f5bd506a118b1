//! The winner maps of a profile as text tables (like the paper's Fig. 8) and as an SVG plot.
use crate::mgk::profile::Profile;
use octile_types::mgk::primitives::{NNZ_BIN_WIDTH, NNZ_BINS};

/// Text table of one map: rows = nnz(A) bins, columns = nnz(B) bins, one letter per cell.
pub fn winner_table(title: &str, rows: &[String]) -> String {
    let mut s = format!("{title}  (row: nonzeros of tile A, column: nonzeros of tile B; D dense×dense, L dense×sparse, R sparse×dense, S sparse×sparse)\n");
    s += "  nnz A\\B ";
    for b in 0..NNZ_BINS {
        s += &format!("{:>3}", bin_label_short(b));
    }
    s += "\n";
    for (a, row) in rows.iter().enumerate() {
        s += &format!("  {:>7} ", bin_label(a));
        for c in row.chars() {
            s += &format!("{c:>3}");
        }
        s += "\n";
    }
    s
}

fn bin_label(b: usize) -> String {
    if b + 1 >= NNZ_BINS { "64".into() } else { format!("{}-{}", b as u32 * NNZ_BIN_WIDTH, b as u32 * NNZ_BIN_WIDTH + NNZ_BIN_WIDTH - 1) }
}

fn bin_label_short(b: usize) -> String {
    format!("{}", if b + 1 >= NNZ_BINS { 64 } else { b as u32 * NNZ_BIN_WIDTH })
}

/// The winner tables of every map of a profile (unlabeled; cheap labeled, when present; labeled).
pub fn winner_tables(p: &Profile) -> String {
    let mut s = winner_table("unlabeled (κe ≡ 1)", &p.unlabeled);
    if let Some(cheap) = &p.labeled_cheap {
        s += &winner_table("labeled, cheap κe (one Kronecker delta)", cheap);
    }
    s + &winner_table("labeled (κe = delta × square exponential)", &p.labeled)
}

/// SVG of the maps of a profile (one 17×17 panel per map, one colour per primitive, with a legend).
pub fn winner_svg(p: &Profile) -> String {
    let cell = 18;
    let (left, top, gap) = (60, 50, 70);
    let panel = cell * NNZ_BINS as i32;
    let mut maps = vec![("unlabeled", &p.unlabeled)];
    if let Some(c) = &p.labeled_cheap {
        maps.push(("labeled, cheap κe (delta)", c));
    }
    maps.push(("labeled (delta × square exponential)", &p.labeled));
    let width = left + maps.len() as i32 * (panel + gap) + 20;
    let height = top + panel + 90;
    let colour = |c: char| match c {
        'D' => "#1f77b4",
        'L' => "#2ca02c",
        'R' => "#98df8a",
        _ => "#ff7f0e",
    };
    let mut s = format!("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" font-family=\"sans-serif\" font-size=\"11\">\n");
    s += &format!(
        "<text x=\"{left}\" y=\"18\" font-size=\"13\">Fastest tile-pair primitive: {} {} ({}, {}, {} dense walks)</text>\n",
        p.backend,
        p.device,
        p.arch,
        p.precision,
        p.walk()
    );
    for (k, (name, rows)) in maps.into_iter().enumerate() {
        let x0 = left + k as i32 * (panel + gap);
        s += &format!("<text x=\"{}\" y=\"{}\" font-size=\"12\">{name}</text>\n", x0, top - 18);
        for (a, row) in rows.iter().enumerate() {
            for (b, c) in row.chars().enumerate() {
                let (x, y) = (x0 + b as i32 * cell, top + (NNZ_BINS - 1 - a) as i32 * cell);
                s += &format!(
                    "<rect x=\"{x}\" y=\"{y}\" width=\"{cell}\" height=\"{cell}\" fill=\"{}\" stroke=\"white\" stroke-width=\"0.5\"><title>nnz A {} / nnz B {}: {c}</title></rect>\n",
                    colour(c),
                    bin_label(a),
                    bin_label(b)
                );
            }
        }
        for b in (0..NNZ_BINS).step_by(4) {
            s += &format!("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", x0 + b as i32 * cell + cell / 2, top + panel + 14, bin_label_short(b));
            s += &format!(
                "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n",
                x0 - 4,
                top + (NNZ_BINS - 1 - b) as i32 * cell + cell / 2 + 4,
                bin_label_short(b)
            );
        }
        s += &format!("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">nonzeros of tile B</text>\n", x0 + panel / 2, top + panel + 30);
        s += &format!("<text transform=\"translate({},{}) rotate(-90)\" text-anchor=\"middle\">nonzeros of tile A</text>\n", x0 - 36, top + panel / 2);
    }
    for (k, (c, label)) in [('D', "dense×dense"), ('L', "dense×sparse"), ('R', "sparse×dense"), ('S', "sparse×sparse")].into_iter().enumerate() {
        let x = left + k as i32 * 120;
        let y = top + panel + 50;
        s += &format!("<rect x=\"{x}\" y=\"{y}\" width=\"12\" height=\"12\" fill=\"{}\"/><text x=\"{}\" y=\"{}\">{label}</text>\n", colour(c), x + 16, y + 10);
    }
    s += "</svg>\n";
    s
}
