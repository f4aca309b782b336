//! A fast, non-cryptographic hasher for the graph stage's maps (the FxHash function rustc
//! uses): keys here are small (node numbers, vertices, short references) and come from the
//! catalog being checked, so SipHash's resistance to chosen keys buys nothing and cost a
//! tenth of `ordo check` on a 100,000-resource catalog.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

#[derive(Default, Clone, Copy)]
pub struct FxHasher {
    hash: u64,
}

impl FxHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut buf = [0u8; 8];
            buf[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(buf));
        }
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }

    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.hash
    }
}

pub type FastBuild = BuildHasherDefault<FxHasher>;
pub type FastMap<K, V> = HashMap<K, V, FastBuild>;
pub type FastSet<K> = HashSet<K, FastBuild>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distinct_keys_stay_distinct() {
        let mut m: FastMap<(usize, usize), usize> = FastMap::default();
        for a in 0..300 {
            for b in 0..300 {
                m.insert((a, b), a * 300 + b);
            }
        }
        assert_eq!(m.len(), 90_000);
        assert_eq!(m[&(17, 42)], 17 * 300 + 42);
        let s: FastSet<&str> = ["a", "ab", "abcdefgh", "abcdefghi"].into_iter().collect();
        assert!(s.contains("abcdefghi") && !s.contains("abcdefg"));
    }
}
