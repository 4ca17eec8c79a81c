//! The rows of `shine bench cpu`: one case at one thread count, both sides' times and checks,
//! as a struct with the keys of the JSON report, and their summary line and Markdown table.

use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// The shine program of a case: the program, the definition, the strategy file and the
/// strategy expression (none: the definition as written).
#[derive(Clone, Debug, Serialize)]
pub struct ShineSpec {
    /// The program, relative to the repository root (or absolute).
    pub program: String,
    /// The definition.
    pub def: String,
    /// The strategy file, relative to the repository root (or absolute); without it,
    /// `strategy` names a built-in schedule.
    pub strategy_file: Option<String>,
    /// The strategy to apply.
    pub strategy: Option<String>,
}

/// A timed side of a case: the statistics of its samples and its warm-up runs per round.
#[derive(Clone, Debug)]
pub struct SideTimes {
    /// The statistics of the timed runs (none without samples).
    pub timing: Option<runtime::Timing>,
    /// The untimed runs before each chunk.
    pub warmup_per_round: usize,
}

/// One row of the report. Fields without `skip_serializing_if` are in every row (`null`
/// when unknown); the others only when known. The JSON keys come out sorted, as
/// `serde_json` orders an object's keys.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Row {
    /// The case's name.
    pub case: String,
    /// The case's group.
    pub group: String,
    /// The thread count (`OMP_NUM_THREADS` and the anchors' equivalents).
    pub threads: usize,
    /// The sizes of the case.
    pub nats: BTreeMap<String, i64>,
    /// The shine program; none: the case has none yet (the anchor still runs).
    #[serde(flatten)]
    pub shine: Option<ShineSpec>,
    /// The anchor's name.
    pub anchor: Option<String>,
    /// The case's note.
    pub note: Option<String>,

    /// Why the shine side failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The time of shine's first (untimed) run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shine_first_ms: Option<f64>,
    /// The time to compile shine's code (front end and C compiler).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shine_compile_s: Option<f64>,
    /// The median of shine's timed runs.
    pub shine_median_ms: Option<f64>,
    /// The fastest of shine's timed runs.
    pub shine_min_ms: Option<f64>,
    /// The slowest of shine's timed runs.
    pub shine_max_ms: Option<f64>,
    /// The number of shine's timed runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shine_runs: Option<usize>,
    /// Shine's timed runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shine_samples_ms: Option<Vec<f64>>,
    /// Shine's untimed runs before each chunk.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shine_warmup_per_round: Option<usize>,

    /// Whether shine's result is right (against numpy, or the interpreter without anchors).
    pub verified: Option<bool>,
    /// What shine's result was checked against: `numpy:REFERENCE` or `interpreter`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verified_by: Option<String>,
    /// Why shine's result could not be checked, or how it differs from the interpreter's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verify_error: Option<String>,
    /// The largest difference from numpy's reference, as the anchor worker reports it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_abs_err: Option<Value>,

    /// Why the anchor side failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub anchor_error: Option<String>,
    /// The time of the anchor's first (untimed) run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub anchor_first_ms: Option<f64>,
    /// Whether the anchor's result matches the reference, as the anchor worker reports it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub anchor_verified: Option<Value>,
    /// The anchor's largest difference from the reference, as the anchor worker reports it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub anchor_max_abs_err: Option<Value>,
    /// What the anchor worker says about the anchor (schedule, library).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub anchor_info: Option<Value>,
    /// The median of the anchor's timed runs.
    pub anchor_median_ms: Option<f64>,
    /// The fastest of the anchor's timed runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub anchor_min_ms: Option<f64>,
    /// The slowest of the anchor's timed runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub anchor_max_ms: Option<f64>,
    /// The number of the anchor's timed runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub anchor_runs: Option<usize>,
    /// The anchor's timed runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub anchor_samples_ms: Option<Vec<f64>>,
    /// The anchor's untimed runs before each chunk.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub anchor_warmup_per_round: Option<usize>,

    /// Anchor median over shine median: above 1, shine is faster.
    pub ratio: Option<f64>,
    /// CPUs' worth of time other processes took while the case was timed (none when the
    /// window was too short to tell).
    pub foreign_cpus: Option<f64>,
    /// The rounds the two sides alternated in.
    pub rounds: usize,
    /// Shine's billions of floating-point operations per second at its median (cases that
    /// give their `flops`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shine_gflops: Option<f64>,
    /// The machine's peak FMA throughput at this thread count, measured in the same run
    /// (the widest vectors), in GFLOP/s.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_gflops: Option<f64>,
    /// `shine_gflops` over `peak_gflops`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_fraction: Option<f64>,
}

impl Row {
    /// Records shine's timed side.
    pub fn set_shine_times(&mut self, side: SideTimes) {
        if let Some(t) = side.timing {
            self.shine_median_ms = Some(t.median_ms);
            self.shine_min_ms = Some(t.min_ms);
            self.shine_max_ms = Some(t.max_ms);
            self.shine_runs = Some(t.runs);
            self.shine_samples_ms = Some(t.samples_ms);
        }
        self.shine_warmup_per_round = Some(side.warmup_per_round);
    }

    /// Records the anchor's timed side.
    pub fn set_anchor_times(&mut self, side: SideTimes) {
        if let Some(t) = side.timing {
            self.anchor_median_ms = Some(t.median_ms);
            self.anchor_min_ms = Some(t.min_ms);
            self.anchor_max_ms = Some(t.max_ms);
            self.anchor_runs = Some(t.runs);
            self.anchor_samples_ms = Some(t.samples_ms);
        }
        self.anchor_warmup_per_round = Some(side.warmup_per_round);
    }

    /// The ratio of the medians, when both sides were timed.
    pub fn set_ratio(&mut self) {
        if let (Some(s), Some(a)) = (self.shine_median_ms, self.anchor_median_ms) {
            self.ratio = Some(a / s);
        }
    }

    /// The row in one line (and one more per error), for the progress output.
    pub fn summary_line(&self) -> String {
        let mut s = format!(
            "shine {} ms (n={}), {} {} ms (n={}), anchor/shine {}, verified {}",
            fmt_ms(self.shine_median_ms),
            self.shine_runs.unwrap_or(0),
            self.anchor.as_deref().unwrap_or("no anchor"),
            fmt_ms(self.anchor_median_ms),
            self.anchor_runs.unwrap_or(0),
            self.ratio.map_or("-".into(), |r| format!("{r:.2}")),
            self.verified.map_or("null".into(), |v| v.to_string()),
        );
        if let Some(fc) = self.foreign_cpus {
            s.push_str(&format!(", foreign CPUs {fc:.2}"));
        }
        for (key, error) in [
            ("error", &self.error),
            ("anchor_error", &self.anchor_error),
            ("verify_error", &self.verify_error),
        ] {
            if let Some(e) = error {
                s.push_str(&format!("\n    {key}: {}", e.lines().next().unwrap_or("")));
            }
        }
        s
    }
}

/// A time in milliseconds with 2 to 3 significant digits; `-` for none.
fn fmt_ms(v: Option<f64>) -> String {
    match v {
        Some(v) if v >= 100.0 => format!("{v:.0}"),
        Some(v) if v >= 10.0 => format!("{v:.1}"),
        Some(v) => format!("{v:.2}"),
        None => "-".into(),
    }
}

/// The rows as a Markdown table.
pub fn table(rows: &[Row]) -> String {
    let header = [
        "case",
        "T",
        "shine strategy",
        "shine median ms",
        "min–max",
        "anchor",
        "anchor median ms",
        "anchor/shine",
        "verified",
        "of peak",
        "foreign CPUs",
    ];
    let mut lines: Vec<Vec<String>> = Vec::new();
    for row in rows {
        let strategy = match &row.shine {
            None => "no shine program yet".into(),
            Some(ShineSpec {
                strategy: Some(st), ..
            }) => st.clone(),
            Some(_) => "as written".into(),
        };
        let shine_median = if row.error.is_some() {
            "error".to_string()
        } else {
            fmt_ms(row.shine_median_ms)
        };
        let min_max = match (row.shine_min_ms, row.shine_max_ms) {
            (Some(a), Some(b)) => format!("{}–{}", fmt_ms(Some(a)), fmt_ms(Some(b))),
            _ => "-".into(),
        };
        let anchor_median = if row.anchor_error.is_some() {
            "error".to_string()
        } else {
            fmt_ms(row.anchor_median_ms)
        };
        let verified = match row.verified {
            Some(true) => "yes",
            Some(false) => "NO",
            None => "-",
        };
        lines.push(vec![
            row.case.clone(),
            row.threads.to_string(),
            strategy,
            shine_median,
            min_max,
            row.anchor.clone().unwrap_or("-".into()),
            anchor_median,
            row.ratio.map_or("-".into(), |r| format!("{r:.2}")),
            verified.to_string(),
            row.peak_fraction
                .map_or("-".into(), |f| format!("{:.0}%", f * 100.0)),
            row.foreign_cpus.map_or("-".into(), |x| format!("{x:.2}")),
        ]);
    }
    let widths: Vec<usize> = (0..header.len())
        .map(|i| {
            lines
                .iter()
                .map(|l| l[i].chars().count())
                .chain(Some(header[i].chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let render = |cells: Vec<String>| {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c}{}", " ".repeat(w - c.chars().count())))
            .collect();
        format!("| {} |", padded.join(" | "))
    };
    let mut out = vec![render(header.iter().map(|h| h.to_string()).collect())];
    out.push(format!(
        "|{}|",
        widths
            .iter()
            .map(|w| "-".repeat(w + 2))
            .collect::<Vec<_>>()
            .join("|")
    ));
    out.extend(lines.into_iter().map(render));
    out.join("\n")
}
