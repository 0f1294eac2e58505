//! Keyed events with uniform or Zipf-distributed keys: the input of the keyed sliding sum/max
//! workloads.
//!
//! Events arrive in time order at a fixed event-time rate ([`KeyedStream::events_per_ms`]),
//! so a stream of `n` events spans `n / rate` ms; values are integers in `[0, 1000)` stored as
//! `f64`, so sums are exact and checksums compare across strategies.

use crate::rng::SplitMix64;
use crate::GeneratedEvent;

/// How keys are drawn.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum KeyDistribution {
    /// Every key equally likely.
    Uniform,
    /// Key of rank `r` (1-based; key id `r - 1`, so key 0 is the hottest) with probability
    /// proportional to `1 / r^exponent`.
    Zipf {
        /// The exponent `s` (1.0 in the benchmark).
        exponent: f64,
    },
}

impl KeyDistribution {
    /// `uniform` or `zipf` (the exponent is in the workload name only when it is not 1).
    #[must_use]
    pub fn label(&self) -> String {
        match self {
            KeyDistribution::Uniform => "uniform".to_owned(),
            KeyDistribution::Zipf { exponent } if *exponent == 1.0 => "zipf".to_owned(),
            KeyDistribution::Zipf { exponent } => format!("zipf(s={exponent})"),
        }
    }
}

/// Draws key ids from a [`KeyDistribution`].
///
/// Zipf sampling is exact inversion: a table of the cumulative distribution over all keys
/// (8 bytes per key) and a binary search per sample. It costs `O(log n)` per key, which is
/// spent before a benchmark's clock starts.
#[derive(Clone, Debug)]
pub struct KeySampler {
    keys: u32,
    /// Cumulative probabilities of ranks 1..=keys (Zipf only).
    cdf: Option<Vec<f64>>,
}

impl KeySampler {
    /// A sampler over `keys` keys (at least 1).
    #[must_use]
    pub fn new(keys: u32, distribution: KeyDistribution) -> Self {
        let keys = keys.max(1);
        let cdf = match distribution {
            KeyDistribution::Uniform => None,
            KeyDistribution::Zipf { exponent } => {
                let mut acc = 0.0;
                let mut cdf: Vec<f64> = (1..=keys)
                    .map(|r| {
                        acc += f64::from(r).powf(-exponent);
                        acc
                    })
                    .collect();
                for c in &mut cdf {
                    *c /= acc;
                }
                Some(cdf)
            }
        };
        Self { keys, cdf }
    }

    /// The next key id, in `[0, keys)`.
    pub fn sample(&self, rng: &mut SplitMix64) -> u32 {
        match &self.cdf {
            None => rng.below(u64::from(self.keys)) as u32,
            Some(cdf) => {
                let u = rng.next_f64();
                (cdf.partition_point(|c| *c <= u) as u32).min(self.keys - 1)
            }
        }
    }
}

/// A keyed event stream: how many keys, how they are drawn, how fast event time advances.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KeyedStream {
    /// Number of distinct keys that may be drawn.
    pub keys: u32,
    /// The key distribution.
    pub distribution: KeyDistribution,
    /// Events per ms of event time (timestamp of event `i` = `i / events_per_ms`).
    pub events_per_ms: u32,
    /// The seed.
    pub seed: u64,
}

impl KeyedStream {
    /// The first `n` events of the stream (deterministic; a shorter stream is a prefix of a
    /// longer one).
    ///
    /// # Examples
    /// ```
    /// use benches::keyed::{KeyDistribution, KeyedStream};
    /// let s = KeyedStream { keys: 100, distribution: KeyDistribution::Zipf { exponent: 1.0 }, events_per_ms: 2, seed: 1 };
    /// let e = s.generate(1000);
    /// assert_eq!(e, s.generate(1000));
    /// assert_eq!(&e[..10], &s.generate(10)[..]);
    /// assert_eq!(e[999].0, 499);
    /// ```
    #[must_use]
    pub fn generate(&self, n: usize) -> Vec<GeneratedEvent> {
        let sampler = KeySampler::new(self.keys, self.distribution);
        let mut rng = SplitMix64::new(self.seed);
        let per_ms = i64::from(self.events_per_ms.max(1));
        (0..n)
            .map(|i| {
                let key = sampler.sample(&mut rng);
                let value = rng.below(1000) as f64;
                (i as i64 / per_ms, key, value)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zipf_is_skewed_like_one_over_rank() {
        let s = KeyedStream {
            keys: 1000,
            distribution: KeyDistribution::Zipf { exponent: 1.0 },
            events_per_ms: 1,
            seed: 3,
        };
        let events = s.generate(200_000);
        let mut counts = vec![0u32; 1000];
        for e in &events {
            counts[e.1 as usize] += 1;
        }
        // H(1000) ~ 7.485: rank 1 gets ~13.4 %, rank 2 half of that, rank 10 a tenth.
        let share = |k: usize| f64::from(counts[k]) / events.len() as f64;
        assert!((share(0) - 0.1336).abs() < 0.005, "{}", share(0));
        assert!((share(0) / share(1) - 2.0).abs() < 0.15);
        assert!((share(0) / share(9) - 10.0).abs() < 1.5);
    }

    #[test]
    fn uniform_covers_the_keys_evenly() {
        let s = KeyedStream {
            keys: 10,
            distribution: KeyDistribution::Uniform,
            events_per_ms: 1,
            seed: 9,
        };
        let mut counts = [0u32; 10];
        for e in s.generate(100_000) {
            counts[e.1 as usize] += 1;
            assert!((0.0..1000.0).contains(&e.2) && e.2.fract() == 0.0);
        }
        assert!(
            counts.iter().all(|c| (9_000..11_000).contains(c)),
            "{counts:?}"
        );
    }
}
