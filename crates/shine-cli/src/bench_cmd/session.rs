//! One case at one thread count: the shine side compiled, run once and verified, the anchor
//! built on the same inputs and checked, then both sides timed in interleaved rounds.

use super::cases::Case;
use super::noise::{foreign_cpus, snapshot};
use super::settings::{chunks, Settings};
use super::workers::Worker;
use super::CpuArgs;
use crate::bench_row::{Row, SideTimes};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

/// Running state shared by the cases of one thread count.
pub(super) struct Session<'a> {
    pub(super) settings: &'a Settings,
    pub(super) shine: Worker,
    pub(super) anchors: Option<Worker>,
    pub(super) dir: &'a Path,
    pub(super) args: &'a CpuArgs,
    pub(super) root: &'a Path,
    pub(super) next_id: u64,
}

/// What a side of a case has ready to time.
struct Side {
    id: u64,
    runs: usize,
    warmup: usize,
    samples: Vec<f64>,
}

impl Side {
    /// The side prepared as `id`, whose single run took `first_ms`, with its runs still to do.
    fn new(id: u64, settings: &Settings, first_ms: f64) -> Side {
        Side {
            id,
            runs: settings.runs_for(first_ms),
            warmup: settings.warmup_for(first_ms),
            samples: Vec::new(),
        }
    }

    /// The statistics of the samples and the warm-up runs per round.
    fn times(self) -> SideTimes {
        SideTimes {
            timing: runtime::Timing::from_samples(self.samples),
            warmup_per_round: self.warmup,
        }
    }
}

impl Session<'_> {
    fn fresh_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    pub(super) fn run_case(&mut self, case: &Case, threads: usize) -> Row {
        let nats: BTreeMap<String, i64> = case.nats.iter().cloned().collect();
        let mut row = Row {
            case: case.name.clone(),
            group: case.group.clone(),
            threads,
            nats: nats.clone(),
            shine: case.shine.clone(),
            anchor: case.anchor.clone(),
            note: case.note.clone(),
            ..Row::default()
        };

        // The shine side: compile, run once, verify.
        let case_dir = self.dir.join(format!("{}-{threads}", case.name));
        let _ = std::fs::create_dir_all(&case_dir);
        let mut shine_side = None;
        let mut shine_io: Option<(Value, Value)> = None;
        if let Some(spec) = &case.shine {
            let id = self.fresh_id();
            let path = |p: &str| self.root.join(p).display().to_string();
            let request = json!({
                "op": "prepare", "id": id,
                "program": path(&spec.program), "def": spec.def,
                "strategy_file": spec.strategy_file.as_deref().map(path),
                "strategy": spec.strategy,
                "nats": nats, "seed": case.seed,
                "dir": if self.anchors.is_some() { Some(case_dir.display().to_string()) } else { None },
                "verify_interpreter": self.anchors.is_none(),
                "cc": self.args.cc, "cflags": self.args.cflags,
                "fast_math": self.args.fast_math,
            });
            match self.shine.request(&request) {
                Ok(answer) => {
                    let first_ms = answer["first_ms"].as_f64().unwrap_or(1.0);
                    row.shine_first_ms = Some(first_ms);
                    row.shine_compile_s = answer["compile_s"].as_f64();
                    if self.anchors.is_none() {
                        row.verified = answer["verified"].as_bool();
                        row.verified_by = Some("interpreter".into());
                        row.verify_error = answer["verify_error"].as_str().map(str::to_string);
                    }
                    shine_io = Some((answer["inputs"].clone(), answer["output"].clone()));
                    shine_side = Some(Side::new(id, self.settings, first_ms));
                }
                Err(e) => row.error = Some(e),
            }
        }

        // The anchor side: check shine's result, build the anchor on the same inputs.
        let mut anchor_side = None;
        let anchor_id = self.fresh_id();
        if let Some(anchors) = self.anchors.as_mut() {
            if let (Some((inputs, output)), Some(reference)) = (&shine_io, &case.reference) {
                let request = json!({"op": "verify", "reference": reference,
                                     "inputs": inputs, "output": output});
                match anchors.request(&request) {
                    Ok(a) => {
                        row.verified = a["verified"].as_bool();
                        row.verified_by = Some(format!("numpy:{reference}"));
                        row.max_abs_err = Some(a["max_abs_err"].clone());
                    }
                    Err(e) => row.verify_error = Some(e),
                }
            }
            if let Some(anchor) = &case.anchor {
                let id = anchor_id;
                let inputs = shine_io.as_ref().map(|(i, _)| i.clone());
                let request = json!({"op": "prepare", "id": id, "anchor": anchor,
                                     "inputs": inputs, "nats": nats,
                                     "reference": case.reference});
                match anchors.request(&request) {
                    Ok(a) => {
                        let first_ms = a["first_ms"].as_f64().unwrap_or(1.0);
                        row.anchor_first_ms = Some(first_ms);
                        row.anchor_verified = Some(a["anchor_verified"].clone());
                        row.anchor_max_abs_err = Some(a["anchor_max_abs_err"].clone());
                        row.anchor_info = Some(a["info"].clone());
                        anchor_side = Some(Side::new(id, self.settings, first_ms));
                    }
                    Err(e) => row.anchor_error = Some(e),
                }
            }
        }
        let _ = std::fs::remove_dir_all(&case_dir);

        // Interleaved rounds.
        let pids: Vec<u32> = std::iter::once(std::process::id())
            .chain(Some(self.shine.pid()))
            .chain(self.anchors.as_ref().map(Worker::pid))
            .collect();
        let before = snapshot(&pids);
        let rounds = self
            .settings
            .rounds
            .min(
                shine_side
                    .as_ref()
                    .map_or(0, |s| s.runs)
                    .max(anchor_side.as_ref().map_or(0, |s| s.runs)),
            )
            .max(1);
        let shine_chunks = chunks(shine_side.as_ref().map_or(0, |s| s.runs), rounds);
        let anchor_chunks = chunks(anchor_side.as_ref().map_or(0, |s| s.runs), rounds);
        let mut last_side = None;
        'rounds: for r in 0..rounds {
            let order = if r % 2 == 0 { [0, 1] } else { [1, 0] };
            for side in order {
                let (worker, state, n) = if side == 0 {
                    (Some(&mut self.shine), shine_side.as_mut(), shine_chunks[r])
                } else {
                    (
                        self.anchors.as_mut(),
                        anchor_side.as_mut(),
                        anchor_chunks[r],
                    )
                };
                let (Some(worker), Some(state)) = (worker, state) else {
                    continue;
                };
                if n == 0 {
                    continue;
                }
                if last_side.is_some_and(|l| l != side) {
                    std::thread::sleep(self.settings.settle);
                }
                last_side = Some(side);
                let request = json!({"op": "time", "id": state.id, "runs": n,
                                     "warmup": state.warmup});
                match worker.request(&request) {
                    Ok(a) => state.samples.extend(
                        a["samples_ms"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .filter_map(Value::as_f64),
                    ),
                    Err(e) => {
                        if side == 0 {
                            row.error = Some(e);
                        } else {
                            row.anchor_error = Some(e);
                        }
                        break 'rounds;
                    }
                }
            }
        }
        // /proc counts in 10 ms ticks: too coarse for a window shorter than half a second.
        row.foreign_cpus = match (before, snapshot(&pids)) {
            (Some(a), Some(b)) if b.at.duration_since(a.at) >= Duration::from_millis(500) => {
                let f = foreign_cpus(&a, &b);
                Some((f * 100.0).round() / 100.0)
            }
            _ => None,
        };
        for (worker, side) in [
            (Some(&mut self.shine), &shine_side),
            (self.anchors.as_mut(), &anchor_side),
        ] {
            if let (Some(w), Some(s)) = (worker, side) {
                let _ = w.request(&json!({"op": "release", "id": s.id}));
            }
        }
        if let Some(side) = shine_side {
            row.set_shine_times(side.times());
        }
        if let Some(side) = anchor_side {
            row.set_anchor_times(side.times());
        }
        row.set_ratio();
        row.rounds = rounds;
        row
    }
}
