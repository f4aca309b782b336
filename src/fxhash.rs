//! A fast, non-cryptographic hasher for internal maps (the FxHash of rustc and Firefox:
//! multiply-rotate over machine words), shared by the evaluator and the graph stage. The keys
//! are names, titles, references and node numbers from the manifest or catalog at hand, not
//! input from an adversary over a network, so SipHash's resistance to collision attacks buys
//! nothing here and costs a lot per lookup (a tenth of `ordo check` on 100,000 resources).

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// A `HashMap` with [`FxHasher`]. Build with `FxHashMap::default()`.
pub type FxHashMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;
/// A `HashSet` with [`FxHasher`].
pub type FxHashSet<K> = HashSet<K, BuildHasherDefault<FxHasher>>;
/// An insertion-ordered map with [`FxHasher`].
pub type FxIndexMap<K, V> = indexmap::IndexMap<K, V, BuildHasherDefault<FxHasher>>;

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

#[derive(Clone, Copy, Default)]
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
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.add(u64::from_le_bytes(w));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(w));
        }
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(i as u64);
    }

    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(i as u64);
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
        // The last step is a multiplication, whose low bits depend only on the low bits of
        // its operands; hashbrown picks the bucket from the low bits. Rotating the well-mixed
        // high bits down (as rustc-hash 2 does) keeps keys that differ only early in the
        // text, such as `File[/srv/a/f1]`... `File[/srv/z/f9]`, from crowding a few buckets.
        self.hash.rotate_left(26)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_find_what_they_hold() {
        let mut m: FxHashMap<(String, String), usize> = FxHashMap::default();
        for i in 0..1000 {
            m.insert((format!("T{}", i % 7), format!("title-{i}")), i);
        }
        assert_eq!(m.len(), 1000);
        assert_eq!(m.get(&("T3".into(), "title-10".into())), Some(&10));
        assert_eq!(m.get(&("T4".into(), "title-10".into())), None);
    }

    #[test]
    fn different_strings_hash_differently() {
        let h = |s: &str| {
            let mut x = FxHasher::default();
            x.write(s.as_bytes());
            x.finish()
        };
        assert_ne!(h("abcdefgh1"), h("abcdefgh2"));
        assert_ne!(h("a"), h("b"));
    }

    #[test]
    fn distinct_keys_stay_distinct() {
        let mut m: FxHashMap<(usize, usize), usize> = FxHashMap::default();
        for a in 0..300 {
            for b in 0..300 {
                m.insert((a, b), a * 300 + b);
            }
        }
        assert_eq!(m.len(), 90_000);
        assert_eq!(m[&(17, 42)], 17 * 300 + 42);
        let s: FxHashSet<&str> = ["a", "ab", "abcdefgh", "abcdefghi"].into_iter().collect();
        assert!(s.contains("abcdefghi") && !s.contains("abcdefg"));
    }

    #[test]
    fn low_bits_spread_paths_that_differ_early() {
        // hashbrown takes a bucket from the low bits: for 100,000 references to files whose
        // paths differ in the middle, the low 17 bits (the table of that many keys) should
        // take about as many values as a random hash gives (69,968 expected), not a few.
        use std::hash::BuildHasher;
        let build = BuildHasherDefault::<FxHasher>::default();
        let low: FxHashSet<u64> = (0..100_000)
            .map(|i| {
                build.hash_one(format!(
                    "File[/srv/root-100000/d{}/f{}.conf]",
                    i / 100,
                    i % 100
                )) & 0x1_ffff
            })
            .collect();
        assert!(low.len() > 60_000, "{} distinct buckets", low.len());
    }
}
