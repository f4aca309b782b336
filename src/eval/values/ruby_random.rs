//! Ruby's `Random.new(seed).rand(max)`: MT19937 seeded the way Ruby 3.1 seeds it.
//!
//! Puppet's `fqdn_rand` and stdlib's `fqdn_rotate` pick their numbers with
//! `Puppet::Util.deterministic_rand_int(seed, max)`, which is exactly this; catalogs only
//! match Puppet's if we draw the same numbers.

const N: usize = 624;
const M: usize = 397;

pub struct Mt {
    state: [u32; N],
    index: usize,
}

impl Mt {
    fn init_genrand(s: u32) -> Mt {
        let mut state = [0u32; N];
        state[0] = s;
        for i in 1..N {
            state[i] = 1812433253u32
                .wrapping_mul(state[i - 1] ^ (state[i - 1] >> 30))
                .wrapping_add(i as u32);
        }
        Mt { state, index: N }
    }

    fn init_by_array(key: &[u32]) -> Mt {
        let mut mt = Mt::init_genrand(19650218);
        let st = &mut mt.state;
        let (mut i, mut j) = (1usize, 0usize);
        let mut k = N.max(key.len());
        while k > 0 {
            st[i] = (st[i] ^ (st[i - 1] ^ (st[i - 1] >> 30)).wrapping_mul(1664525))
                .wrapping_add(key[j])
                .wrapping_add(j as u32);
            i += 1;
            j += 1;
            if i >= N {
                st[0] = st[N - 1];
                i = 1;
            }
            if j >= key.len() {
                j = 0;
            }
            k -= 1;
        }
        k = N - 1;
        while k > 0 {
            st[i] = (st[i] ^ (st[i - 1] ^ (st[i - 1] >> 30)).wrapping_mul(1566083941))
                .wrapping_sub(i as u32);
            i += 1;
            if i >= N {
                st[0] = st[N - 1];
                i = 1;
            }
            k -= 1;
        }
        st[0] = 0x8000_0000;
        mt
    }

    /// `Random.new(seed)` for a non-negative seed given as 32-bit words, least significant
    /// first.
    pub fn from_seed_words(words: &[u32]) -> Mt {
        let mut len = words.len();
        while len > 1 && words[len - 1] == 0 {
            len -= 1;
        }
        // Ruby seeds one-word seeds with `init_genrand`, longer ones with `init_by_array`.
        if len <= 1 {
            return Mt::init_genrand(words.first().copied().unwrap_or(0));
        }
        Mt::init_by_array(&words[..len])
    }

    pub fn genrand_u32(&mut self) -> u32 {
        if self.index >= N {
            for kk in 0..N {
                let y = (self.state[kk] & 0x8000_0000) | (self.state[(kk + 1) % N] & 0x7fff_ffff);
                let mut v = self.state[(kk + M) % N] ^ (y >> 1);
                if y & 1 != 0 {
                    v ^= 0x9908_b0df;
                }
                self.state[kk] = v;
            }
            self.index = 0;
        }
        let mut y = self.state[self.index];
        self.index += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^= y >> 18;
        y
    }

    /// `rand(max)`: Ruby's `limited_rand`, rejection sampling over as many 32-bit words as
    /// `max - 1` needs (most significant first).
    pub fn rand_below(&mut self, max: u64) -> u64 {
        if max <= 1 {
            return 0;
        }
        let limit = max - 1;
        let mut mask = limit;
        for s in [1, 2, 4, 8, 16, 32] {
            mask |= mask >> s;
        }
        'retry: loop {
            let mut val: u64 = 0;
            for i in (0..2).rev() {
                if (mask >> (i * 32)) & 0xffff_ffff != 0 {
                    val |= (self.genrand_u32() as u64) << (i * 32);
                    val &= mask;
                    if limit < val {
                        continue 'retry;
                    }
                }
            }
            return val;
        }
    }
}

/// The seed Puppet derives from text: `Digest::MD5.hexdigest(text).hex` as 32-bit words.
pub fn md5_seed_words(text: &str) -> Vec<u32> {
    let hex = super::strings::md5_hex(text.as_bytes());
    let mut words = Vec::new();
    let mut end = hex.len();
    while end > 0 {
        let start = end.saturating_sub(8);
        words.push(u32::from_str_radix(&hex[start..end], 16).unwrap_or(0));
        end = start;
    }
    words
}

/// `Puppet::Util.deterministic_rand_int(Digest::MD5.hexdigest(text).hex, max)`.
pub fn deterministic_rand(text: &str, max: u64) -> u64 {
    Mt::from_seed_words(&md5_seed_words(text)).rand_below(max)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Expected values printed by `ruby -e 'p Random.new(SEED).rand(MAX)'` (Ruby 3.1).
    #[test]
    fn matches_ruby() {
        assert_eq!(Mt::from_seed_words(&[5]).rand_below(10), 3);
        assert_eq!(Mt::from_seed_words(&[1]).rand_below(100), 37);
        assert_eq!(Mt::from_seed_words(&[0]).rand_below(100), 44);
        assert_eq!(Mt::from_seed_words(&[3, 0, 64]).rand_below(1000), 630);
        assert_eq!(deterministic_rand("testnode.example.com:", 4), 3);
    }
}
