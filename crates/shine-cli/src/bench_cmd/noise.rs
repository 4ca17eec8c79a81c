//! Noise: how busy the machine was with other processes while a case ran, from /proc.

use std::time::Instant;

/// Busy time of all CPUs and of our processes, in clock ticks, from /proc.
pub(super) struct CpuSnapshot {
    pub(super) at: Instant,
    busy_all: u64,
    busy_ours: u64,
}

/// Clock ticks per second of /proc figures (USER_HZ, 100 on Linux).
const USER_HZ: f64 = 100.0;

pub(super) fn snapshot(pids: &[u32]) -> Option<CpuSnapshot> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let cpu: Vec<u64> = stat
        .lines()
        .next()?
        .split_whitespace()
        .skip(1)
        .map(|x| x.parse().unwrap_or(0))
        .collect();
    // user nice system idle iowait irq softirq steal ...
    let busy_all = cpu.first()? + cpu.get(1)? + cpu.get(2)? + cpu.get(5)? + cpu.get(6)?;
    let mut busy_ours = 0;
    for pid in pids {
        let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // fields after the command name (which may hold spaces): state is field 3, utime 14
        let rest = &s[s.rfind(')')? + 1..];
        let f: Vec<u64> = rest
            .split_whitespace()
            .map(|x| x.parse().unwrap_or(0))
            .collect();
        busy_ours += f.get(11)? + f.get(12)?;
    }
    Some(CpuSnapshot {
        at: Instant::now(),
        busy_all,
        busy_ours,
    })
}

/// CPUs' worth of time spent by other processes between two snapshots.
pub(super) fn foreign_cpus(a: &CpuSnapshot, b: &CpuSnapshot) -> f64 {
    let wall = b.at.duration_since(a.at).as_secs_f64();
    let all = b.busy_all.saturating_sub(a.busy_all) as f64 / USER_HZ;
    let ours = b.busy_ours.saturating_sub(a.busy_ours) as f64 / USER_HZ;
    if wall > 0.0 {
        ((all - ours) / wall).max(0.0)
    } else {
        0.0
    }
}
