//! Random streams: xoshiro256++ (Blackman and Vigna 2019) seeded through SplitMix64.
//!
//! The generator is written out here rather than taken from a crate so that its output can
//! never change under a dependency upgrade: the same (run seed, stream id) gives the same
//! numbers in every version of ecnlab (a test pins the first outputs). Every component that
//! draws random numbers owns a stream derived from (run seed, stream id), so that changing one
//! component (an AQM, an ECN setting) never shifts the numbers another one sees.

/// SplitMix64 step (Steele, Lea, Flood 2014): used to expand seeds.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Identifies one random stream of a run: a purpose and up to two indices
/// (e.g. `(WORKLOAD_SIZES, workload index, 0)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamId {
    pub purpose: u32,
    pub a: u32,
    pub b: u32,
}

/// Stream purposes. New purposes get new numbers; existing numbers never change.
pub mod purpose {
    pub const ARRIVALS: u32 = 1;
    pub const CONNECTION: u32 = 2;
    pub const FLOW_RTT: u32 = 3;
    pub const FLOW_RWND: u32 = 4;
    pub const HOSTS: u32 = 5;
    pub const START: u32 = 6;
    pub const AQM: u32 = 7;
    pub const RANDOM_LOSS: u32 = 8;
    pub const SOURCE: u32 = 9;
    /// Which hosts of a side have ECN (`tcp.clients.ecn_fraction`); index 0 clients, 1 servers.
    pub const ECN_HOSTS: u32 = 10;
    /// Web sessions: one child stream per session, forked in arrival order.
    pub const SESSION: u32 = 11;
    /// PackMime-HTTP's workload-level size series (b = 0 requests, 1 responses).
    pub const PACKMIME_SIZES: u32 = 12;
    /// TPC-W browsers: one child stream per browser, forked at set-up.
    pub const BROWSER: u32 = 13;
}

#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    /// A generator seeded from one 64-bit value.
    pub fn from_seed(seed: u64) -> Rng {
        let mut sm = seed;
        let s = [
            splitmix64(&mut sm),
            splitmix64(&mut sm),
            splitmix64(&mut sm),
            splitmix64(&mut sm),
        ];
        Rng { s }
    }

    /// The stream `id` of run `seed`.
    pub fn stream(seed: u64, id: StreamId) -> Rng {
        let mut h = seed;
        let mut x = splitmix64(&mut h);
        x ^= (id.purpose as u64) << 32 | id.a as u64;
        let mut h2 = x;
        let mut y = splitmix64(&mut h2);
        y ^= id.b as u64;
        Rng::from_seed(y)
    }

    /// A child stream derived from this one's next output (e.g. one per connection).
    pub fn fork(&mut self) -> Rng {
        Rng::from_seed(self.next_u64())
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = (s[0].wrapping_add(s[3])).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// Uniform on [0, 1) with 53 random bits.
    #[inline]
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform integer on [0, n) (n > 0), by Lemire's multiply-shift (bias below 2^-32 for
    /// the small n used here).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// Exponential with the given mean, by inversion.
    #[inline]
    pub fn exponential(&mut self, mean: f64) -> f64 {
        // 1 - U lies in (0, 1], so the logarithm is finite.
        -mean * (1.0 - self.uniform()).ln()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix_matches_reference() {
        // First outputs of the reference SplitMix64 seeded with 0.
        let mut s = 0u64;
        assert_eq!(splitmix64(&mut s), 0xE220_A839_7B1D_CDAF);
        assert_eq!(splitmix64(&mut s), 0x6E78_9E6A_A1B9_65F4);
    }

    #[test]
    fn streams_are_pinned_across_versions() {
        // These values must never change: they make old results reproducible.
        let mut r = Rng::stream(42, StreamId { purpose: purpose::ARRIVALS, a: 0, b: 0 });
        let got: Vec<u64> = (0..3).map(|_| r.next_u64()).collect();
        assert_eq!(got, PINNED.to_vec(), "generator output changed: {got:x?}");
    }
    const PINNED: [u64; 3] = [0x62a9_0adf_0bb6_b5e2, 0x1ac6_5596_5811_6a42, 0x67e9_001c_c240_ec49];

    #[test]
    fn streams_differ_by_id_and_seed() {
        let id = |a| StreamId { purpose: purpose::AQM, a, b: 0 };
        let x = Rng::stream(1, id(0)).next_u64();
        assert_ne!(x, Rng::stream(1, id(1)).next_u64());
        assert_ne!(x, Rng::stream(2, id(0)).next_u64());
        assert_eq!(x, Rng::stream(1, id(0)).next_u64());
    }

    #[test]
    fn uniform_and_exponential_moments() {
        let mut r = Rng::from_seed(7);
        let n = 200_000;
        let mean_u: f64 = (0..n).map(|_| r.uniform()).sum::<f64>() / n as f64;
        assert!((mean_u - 0.5).abs() < 0.005, "{mean_u}");
        let mean_e: f64 = (0..n).map(|_| r.exponential(3.0)).sum::<f64>() / n as f64;
        assert!((mean_e - 3.0).abs() < 0.05, "{mean_e}");
        assert!((0..1000).all(|_| r.below(7) < 7));
    }
}
