//! SQLite's variable-length integers, as FTS5 writes them in its records (a row's column sizes
//! in `%_docsize`, the table's totals in `%_data`): big-endian groups of seven bits, each byte
//! but the last with its high bit set; a ninth byte, when there is one, holds eight bits.

/// Appends `value` to `out`.
pub(crate) fn put(out: &mut Vec<u8>, value: u64) {
    if value >> 56 != 0 {
        // Nine bytes: eight groups of seven bits, then the low eight bits whole.
        let mut v = value >> 8;
        let mut groups = [0u8; 8];
        for g in groups.iter_mut().rev() {
            *g = (v & 0x7f) as u8 | 0x80;
            v >>= 7;
        }
        out.extend_from_slice(&groups);
        out.push(value as u8);
        return;
    }
    let mut groups = [0u8; 8];
    let mut n = 0;
    let mut v = value;
    loop {
        groups[n] = (v & 0x7f) as u8 | 0x80;
        n += 1;
        v >>= 7;
        if v == 0 {
            break;
        }
    }
    groups[0] &= 0x7f;
    out.extend(groups[..n].iter().rev());
}

/// The integers of a record, in order; a truncated last one is left out.
pub(crate) struct Varints<'a>(pub(crate) &'a [u8]);

impl Iterator for Varints<'_> {
    type Item = u64;

    fn next(&mut self) -> Option<u64> {
        let mut value = 0u64;
        for (i, &byte) in self.0.iter().enumerate() {
            if i == 8 {
                self.0 = &self.0[9..];
                return Some(value << 8 | u64::from(byte));
            }
            value = value << 7 | u64::from(byte & 0x7f);
            if byte & 0x80 == 0 {
                self.0 = &self.0[i + 1..];
                return Some(value);
            }
        }
        self.0 = &[];
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_come_back_as_they_went_in() {
        let values = [
            0,
            1,
            0x7f,
            0x80,
            0x3fff,
            0x4000,
            1 << 35,
            (1 << 56) - 1,
            1 << 56,
            u64::MAX,
        ];
        let mut record = Vec::new();
        for v in values {
            put(&mut record, v);
        }
        assert_eq!(Varints(&record).collect::<Vec<_>>(), values);
        // SQLite's own encodings of a few.
        let bytes = |v| {
            let mut b = Vec::new();
            put(&mut b, v);
            b
        };
        assert_eq!(bytes(0x7f), [0x7f]);
        assert_eq!(bytes(0x80), [0x81, 0x00]);
        assert_eq!(bytes(0x4000), [0x81, 0x80, 0x00]);
        assert_eq!(bytes(u64::MAX), [0xff; 9]);
        assert_eq!(Varints(&[0x81]).count(), 0, "a truncated value");
    }
}
