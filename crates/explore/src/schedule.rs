//! Where a tuning's work runs on this host: candidates are built (compiled and verified) by a
//! pool of CPU workers and timed on devices, one thread per device, each timing one candidate
//! at a time. [`at_once`] runs a set of builds and a set of timings together (CUDA: the CPU
//! builds the next batch while the GPUs time this one); [`one_after_the_other`] runs the
//! timings alone, then the builds (C and OpenMP time on the cores the workers compile on, so
//! nothing else may run while a candidate is timed). Both say what runs as it starts
//! ([`Notes`]), and give back the results in the order of the work given, whatever the order
//! it finished in.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Sender};
use std::sync::{Mutex, PoisonError};

/// What a worker or a device thread says as it starts a piece of work (a progress line).
pub(crate) type Notes = Sender<String>;

/// Builds: `items` to build on `workers` CPU workers with `build(item, notes)`.
pub(crate) struct Builds<'a, F> {
    pub workers: usize,
    pub items: &'a [usize],
    pub build: F,
}

/// Timings: `items` to time with `time(item, device, notes)`, one thread per device of
/// `devices`, each timing one item at a time.
pub(crate) struct Timings<'a, F> {
    pub devices: &'a [usize],
    pub items: &'a [usize],
    pub time: F,
}

/// Runs the builds and the timings at the same time; `say` hears the notes of both as they
/// come. The results, in the order of the items.
pub(crate) fn at_once<B, T, FB, FT>(
    builds: Builds<'_, FB>,
    timings: Timings<'_, FT>,
    say: &mut dyn FnMut(&str),
) -> (Vec<B>, Vec<T>)
where
    B: Send,
    T: Send,
    FB: Fn(usize, &Notes) -> B + Sync,
    FT: Fn(usize, usize, &Notes) -> T + Sync,
{
    let (notes, heard) = channel::<String>();
    std::thread::scope(|scope| {
        let (time, build) = (&timings.time, &builds.build);
        let timing_notes = notes.clone();
        let timed = scope.spawn(move || {
            spread(timings.devices, timings.items, |device, item| {
                time(item, device, &timing_notes)
            })
        });
        let building_notes = notes;
        let workers: Vec<usize> = (0..builds.workers.max(1)).collect();
        let built = scope.spawn(move || {
            spread(&workers, builds.items, |_, item| {
                build(item, &building_notes)
            })
        });
        // every sender is gone when both groups are done: the loop ends then
        for line in heard {
            say(&line);
        }
        (joined(built.join()), joined(timed.join()))
    })
}

/// Runs the timings alone, then the builds alone (nothing is built while a candidate is
/// timed); `say` hears the notes as they come.
pub(crate) fn one_after_the_other<B, T, FB, FT>(
    builds: Builds<'_, FB>,
    timings: Timings<'_, FT>,
    say: &mut dyn FnMut(&str),
) -> (Vec<B>, Vec<T>)
where
    B: Send,
    T: Send,
    FB: Fn(usize, &Notes) -> B + Sync,
    FT: Fn(usize, usize, &Notes) -> T + Sync,
{
    let nothing: &[usize] = &[];
    let (_, timed) = at_once(
        Builds {
            workers: 1,
            items: nothing,
            build: |_, _: &Notes| (),
        },
        timings,
        say,
    );
    let (built, _) = at_once(
        builds,
        Timings {
            devices: &[],
            items: nothing,
            time: |_, _, _: &Notes| (),
        },
        say,
    );
    (built, timed)
}

/// The result of a scoped thread, its panic passed on.
fn joined<R>(result: std::thread::Result<R>) -> R {
    result.unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// Runs `work(lane, item)` for every item, one thread per lane, each taking the next item
/// no thread has taken yet: the results in the order of `items`.
fn spread<R: Send>(
    lanes: &[usize],
    items: &[usize],
    work: impl Fn(usize, usize) -> R + Sync,
) -> Vec<R> {
    if items.is_empty() {
        return Vec::new();
    }
    let next = AtomicUsize::new(0);
    let done = Mutex::new(Vec::with_capacity(items.len()));
    std::thread::scope(|scope| {
        for &lane in lanes.iter().take(items.len()) {
            let (next, done, work) = (&next, &done, &work);
            scope.spawn(move || loop {
                let n = next.fetch_add(1, Ordering::Relaxed);
                let Some(&item) = items.get(n) else { break };
                let result = work(lane, item);
                done.lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push((n, result));
            });
        }
    });
    let mut done = done.into_inner().unwrap_or_else(PoisonError::into_inner);
    done.sort_by_key(|(n, _)| *n);
    done.into_iter().map(|(_, r)| r).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// What ran where and when: `(what, lane, item, start, end)`.
    type Spans = Mutex<Vec<(&'static str, usize, usize, Instant, Instant)>>;

    fn span<R>(spans: &Spans, what: &'static str, lane: usize, item: usize, ms: u64, r: R) -> R {
        let start = Instant::now();
        std::thread::sleep(Duration::from_millis(ms));
        spans
            .lock()
            .unwrap()
            .push((what, lane, item, start, Instant::now()));
        r
    }

    fn overlap(a: (Instant, Instant), b: (Instant, Instant)) -> bool {
        a.0 < b.1 && b.0 < a.1
    }

    #[test]
    fn builds_overlap_timings_and_a_device_times_one_item_at_a_time() {
        let spans = Spans::default();
        let builds = [10, 11, 12, 13, 14, 15, 16];
        let timings = [0, 1, 2, 3, 4];
        let mut heard = Vec::new();
        let (built, timed) = at_once(
            Builds {
                workers: 3,
                items: &builds,
                build: |i, notes: &Notes| {
                    notes.send(format!("build {i}")).unwrap();
                    span(&spans, "build", 0, i, 20, i * 2)
                },
            },
            Timings {
                devices: &[0, 1],
                items: &timings,
                time: |i, d, notes: &Notes| {
                    notes.send(format!("time {i} on {d}")).unwrap();
                    span(&spans, "time", d, i, 15, (i, d))
                },
            },
            &mut |line| heard.push(line.to_string()),
        );
        assert_eq!(built, vec![20, 22, 24, 26, 28, 30, 32]);
        assert_eq!(timed.iter().map(|t| t.0).collect::<Vec<_>>(), timings);
        assert!(timed.iter().all(|t| t.1 < 2));
        assert_eq!(heard.len(), builds.len() + timings.len());
        let spans = spans.into_inner().unwrap();
        let of = |what: &str| -> Vec<_> { spans.iter().filter(|s| s.0 == what).collect() };
        let (b, t) = (of("build"), of("time"));
        assert_eq!((b.len(), t.len()), (builds.len(), timings.len()));
        assert!(
            b.iter()
                .any(|x| t.iter().any(|y| overlap((x.3, x.4), (y.3, y.4)))),
            "no build ran while an item was timed"
        );
        for x in &t {
            for y in &t {
                if x.2 != y.2 && x.1 == y.1 {
                    assert!(
                        !overlap((x.3, x.4), (y.3, y.4)),
                        "device {} timed two at once",
                        x.1
                    );
                }
            }
        }
        // both devices were used, and no more builds ran at once than there are workers (counted as each starts)
        assert!(t.iter().any(|x| x.1 == 0) && t.iter().any(|x| x.1 == 1));
        for x in &b {
            let running = b.iter().filter(|y| y.3 <= x.3 && x.3 < y.4).count();
            assert!(running <= 3, "{running} builds at once on 3 workers");
        }
    }

    /// Items spread over lanes: every item done once, by one lane at a time, every lane
    /// used when the items outnumber them, the results in the order of the items.
    #[test]
    fn every_item_is_done_once_and_a_lane_does_one_at_a_time() {
        for lanes in [vec![0usize], vec![0, 1], vec![3, 5, 7]] {
            let items: Vec<usize> = (0..9).collect();
            let busy: Vec<AtomicUsize> = (0..8).map(|_| AtomicUsize::new(0)).collect();
            let done = spread(&lanes, &items, |lane, item| {
                assert_eq!(busy[lane].fetch_add(1, Ordering::SeqCst), 0, "lane {lane}");
                std::thread::sleep(Duration::from_millis(20));
                busy[lane].fetch_sub(1, Ordering::SeqCst);
                (item * 10, lane)
            });
            let values: Vec<usize> = done.iter().map(|(x, _)| *x).collect();
            assert_eq!(
                values,
                (0..9).map(|i| i * 10).collect::<Vec<_>>(),
                "{lanes:?}"
            );
            let mut used: Vec<usize> = done.iter().map(|(_, lane)| *lane).collect();
            used.sort_unstable();
            used.dedup();
            assert_eq!(used, lanes, "every lane took items");
        }
        let none: Vec<()> = spread(&[0, 1], &[], |_, _| ());
        assert!(none.is_empty());
    }

    #[test]
    fn one_after_the_other_builds_nothing_while_timing() {
        let spans = Spans::default();
        let (built, timed) = one_after_the_other(
            Builds {
                workers: 2,
                items: &[0, 1, 2],
                build: |i, _: &Notes| span(&spans, "build", 0, i, 10, i),
            },
            Timings {
                devices: &[0],
                items: &[5, 6],
                time: |i, d, _: &Notes| span(&spans, "time", d, i, 10, i),
            },
            &mut |_| {},
        );
        assert_eq!((built, timed), (vec![0, 1, 2], vec![5, 6]));
        let spans = spans.into_inner().unwrap();
        let last_timing = spans
            .iter()
            .filter(|s| s.0 == "time")
            .map(|s| s.4)
            .max()
            .unwrap();
        assert!(spans
            .iter()
            .filter(|s| s.0 == "build")
            .all(|s| s.3 >= last_timing));
    }

    #[test]
    fn no_work_and_one_item_need_no_more_threads_than_items() {
        let (built, timed): (Vec<usize>, Vec<usize>) = at_once(
            Builds {
                workers: 8,
                items: &[],
                build: |i, _: &Notes| i,
            },
            Timings {
                devices: &[3],
                items: &[7],
                time: |i, d, _: &Notes| i + d,
            },
            &mut |_| {},
        );
        assert_eq!((built, timed), (vec![], vec![10]));
    }
}
