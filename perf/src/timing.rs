//! Interleaved median timing.
//!
//! The machine this runs on is shared (other builds run next to it), so a
//! single long measurement of one contestant followed by one of another is
//! easily skewed by a burst of load. Instead every contestant of a
//! comparison is timed in turn, round after round (A, B, C, A, B, C, ...,
//! starting each round one contestant later), and each keeps the median of
//! its rounds. Each round of one contestant repeats its work enough times to
//! last about [`Config::target`], so timer resolution and call overhead do
//! not matter.
//!
//! By default rounds are timed with the thread's CPU time
//! ([`Clock::ThreadCpu`]): the kernels are single-threaded, never sleep and
//! do no I/O, so on an idle machine it equals the wall time, and on a busy
//! one it leaves out the time this thread spent descheduled, the largest
//! source of noise when other builds share the cores. (It cannot remove the
//! cache and memory-bandwidth pressure of the other work.)

use std::hint::black_box;
use std::time::{Duration, Instant};

use crate::c::thread_cpu_time;

/// What a round's duration is measured with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Clock {
    /// CPU time of the calling thread (`CLOCK_THREAD_CPUTIME_ID`).
    ThreadCpu,
    /// Elapsed real time (`Instant`).
    Wall,
}

impl Clock {
    /// `cpu` or `wall`.
    pub fn name(self) -> &'static str {
        match self {
            Clock::ThreadCpu => "cpu",
            Clock::Wall => "wall",
        }
    }

    /// Parses [`Clock::name`].
    pub fn parse(s: &str) -> Option<Clock> {
        [Clock::ThreadCpu, Clock::Wall]
            .into_iter()
            .find(|c| c.name() == s)
    }

    /// [`Clock::ThreadCpu`] where the platform has it, else [`Clock::Wall`].
    pub fn best() -> Clock {
        if thread_cpu_time().is_some() {
            Clock::ThreadCpu
        } else {
            Clock::Wall
        }
    }

    /// Runs `f` and returns how long it took by this clock.
    fn time(self, f: impl FnOnce()) -> Duration {
        match self {
            Clock::Wall => {
                let start = Instant::now();
                f();
                start.elapsed()
            }
            Clock::ThreadCpu => {
                let start = thread_cpu_time().unwrap_or_default();
                f();
                thread_cpu_time().unwrap_or_default().saturating_sub(start)
            }
        }
    }
}

/// How long and how often to measure.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    /// Rounds per contestant; the median is reported.
    pub rounds: usize,
    /// Minimum duration of one round of one contestant.
    pub target: Duration,
    /// What durations are measured with.
    pub clock: Clock,
}

impl Config {
    /// The default: 7 rounds of at least 20 ms, thread CPU time.
    pub fn full() -> Config {
        Config {
            rounds: 7,
            target: Duration::from_millis(20),
            clock: Clock::best(),
        }
    }

    /// `--quick`: 5 rounds of at least 8 ms, thread CPU time.
    pub fn quick() -> Config {
        Config {
            rounds: 5,
            target: Duration::from_millis(8),
            clock: Clock::best(),
        }
    }
}

/// One thing to time: a closure doing one unit of work (e.g. one kernel
/// call over the whole buffer).
pub struct Contestant<'a> {
    run: Box<dyn FnMut() + 'a>,
}

impl<'a> Contestant<'a> {
    /// A contestant running `run` once per unit of work.
    pub fn new(run: impl FnMut() + 'a) -> Self {
        Contestant { run: Box::new(run) }
    }

    /// Does one unit of work, untimed.
    pub fn call(&mut self) {
        (self.run)();
    }

    fn time(&mut self, clock: Clock, iters: u64) -> Duration {
        let run = &mut self.run;
        clock.time(|| {
            for _ in 0..iters {
                run();
            }
            black_box(());
        })
    }

    /// Warms up (first touch of the buffers, caches, CPU frequency) and
    /// returns how many calls make one round last at least `target`.
    fn calibrate(&mut self, clock: Clock, target: Duration) -> u64 {
        self.time(clock, 1); // warm-up, not counted
        let one = self.time(clock, 1).max(Duration::from_nanos(1));
        if one >= target {
            return 1;
        }
        // Refine on a batch of about an eighth of the target, then scale up.
        let probe = (target.as_secs_f64() / 8.0 / one.as_secs_f64())
            .ceil()
            .max(1.0) as u64;
        let t = self.time(clock, probe).max(Duration::from_nanos(1));
        let per_call = t.as_secs_f64() / probe as f64;
        (target.as_secs_f64() / per_call).ceil().max(1.0) as u64
    }
}

/// The result of timing one contestant.
#[derive(Clone, Debug)]
pub struct Sample {
    /// Median seconds per call over the rounds.
    pub median: f64,
    /// Fastest round, seconds per call.
    pub min: f64,
    /// Slowest round, seconds per call.
    pub max: f64,
    /// Seconds per call of each round, in round order.
    pub rounds: Vec<f64>,
}

impl Sample {
    /// Throughput in GB/s (10^9 bytes per second) for `bytes` per call.
    pub fn gbps(&self, bytes: usize) -> f64 {
        bytes as f64 / self.median / 1e9
    }

    /// `(max - min) / median`: how much the rounds disagreed.
    pub fn spread(&self) -> f64 {
        (self.max - self.min) / self.median
    }

    /// How many times faster `self` is than `other` (above 1: `self` is
    /// faster): the median over the rounds of the ratio of the two
    /// contestants' times *in the same round*. Both ran back to back under
    /// the same load, so this cancels slow drifts of the machine's load that
    /// a ratio of the two medians would keep.
    pub fn speedup_over(&self, other: &Sample) -> f64 {
        let mut r: Vec<f64> = self
            .rounds
            .iter()
            .zip(&other.rounds)
            .map(|(a, b)| b / a)
            .collect();
        if r.is_empty() {
            return other.median / self.median;
        }
        r.sort_by(f64::total_cmp);
        median_sorted(&r)
    }
}

/// Times all `contestants` interleaved; returns one [`Sample`] each, in order.
pub fn measure(cfg: &Config, contestants: &mut [Contestant<'_>]) -> Vec<Sample> {
    let n = contestants.len();
    let iters: Vec<u64> = contestants
        .iter_mut()
        .map(|c| c.calibrate(cfg.clock, cfg.target))
        .collect();
    let mut rounds: Vec<Vec<f64>> = vec![Vec::with_capacity(cfg.rounds); n];
    for round in 0..cfg.rounds.max(1) {
        for k in 0..n {
            let i = (k + round) % n;
            let t = contestants[i].time(cfg.clock, iters[i]);
            rounds[i].push(t.as_secs_f64() / iters[i] as f64);
        }
    }
    rounds
        .into_iter()
        .map(|rounds| {
            let mut r = rounds.clone();
            r.sort_by(f64::total_cmp);
            Sample {
                median: median_sorted(&r),
                min: r[0],
                max: r[r.len() - 1],
                rounds,
            }
        })
        .collect()
}

fn median_sorted(v: &[f64]) -> f64 {
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even() {
        assert_eq!(median_sorted(&[1.0, 2.0, 9.0]), 2.0);
        assert_eq!(median_sorted(&[1.0, 2.0, 4.0, 9.0]), 3.0);
    }

    #[test]
    fn measures_every_contestant() {
        let mut a = 0u64;
        let mut b = 0u64;
        let cfg = Config {
            rounds: 3,
            target: Duration::from_micros(200),
            clock: Clock::best(),
        };
        let samples = {
            let mut cs = [
                Contestant::new(|| a = black_box(a + 1)),
                Contestant::new(|| b = black_box(b + 2)),
            ];
            measure(&cfg, &mut cs)
        };
        assert_eq!(samples.len(), 2);
        assert!(samples.iter().all(|s| s.median > 0.0 && s.min <= s.max));
        assert!(a > 0 && b > 0);
    }

    #[test]
    fn clocks_advance() {
        assert_eq!(Clock::parse("cpu"), Some(Clock::ThreadCpu));
        for clock in [Clock::ThreadCpu, Clock::Wall] {
            let t = clock.time(|| {
                let mut x = 0u64;
                for i in 0..1_000_000u64 {
                    x = black_box(x.wrapping_mul(31).wrapping_add(i));
                }
            });
            assert!(t > Duration::ZERO, "{clock:?}");
        }
    }

    #[test]
    fn speedup_pairs_rounds() {
        let s = |rounds: Vec<f64>| Sample {
            median: 0.0,
            min: 0.0,
            max: 0.0,
            rounds,
        };
        // The machine got 10x slower in round 2 for both: still 2x.
        let fast = s(vec![1.0, 10.0, 1.0]);
        let slow = s(vec![2.0, 20.0, 2.0]);
        assert_eq!(fast.speedup_over(&slow), 2.0);
        assert_eq!(slow.speedup_over(&fast), 0.5);
    }
}
